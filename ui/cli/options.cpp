#include "options.h"

#include "tensordict/error.h"

#include <QCommandLineParser>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "node_text.h"
#include "tensordict/save.h"
#include "tensordict/value.h"

namespace cli {
namespace {

const char kUsage[] =
    "Usage: tdstudio [PATH] [--select K [--view MODE]] [--compare B] [--screenshot FILE]\n"
    "                [--window-size WxH]\n"
    "       tdstudio --info PATH [--json] [--sha256] [--stats]\n"
    "       tdstudio --save SRC DEST [--archive] [--compression M] [--level N] [--threads N]\n"
    "                [--atomic] [--no-robust-key] [--allow-outside-links] [--skip-objects]\n"
    "                [--key K ...] [--key-name NAME] [--format F [--max-shard-size S]]\n"
    "       tdstudio --diff A B [--rtol R] [--atol T] [--equal-nan] [--key K ...] [--json]\n"
    "                [--threads N]\n"
    "       tdstudio --check PATH [--json] [--strict] [--threads N] [--repair [--dry-run]]\n"
    "       tdstudio --series F1 F2 ... | FOLDER [--key K ...] [--json] [--threads N]\n"
    "       tdstudio --help | --version\n";

// Qt's own GUI arguments. QApplication takes them out of argv itself; the
// parser must not refuse them as unknown options.
struct QtArgument {
    const char* name;
    bool takesValue;
};
const QtArgument kQtArguments[] = {
    {"platform", true},        {"platformpluginpath", true},
    {"platformtheme", true},   {"plugin", true},
    {"qwindowgeometry", true}, {"qwindowtitle", true},
    {"qwindowicon", true},     {"geometry", true},
    {"title", true},           {"icon", true},
    {"display", true},         {"name", true},
    {"session", true},         {"style", true},
    {"stylesheet", true},      {"qmljsdebugger", true},
    {"reverse", false},        {"widgetcount", false},
    {"nograb", false},         {"dograb", false},
    {"sync", false},
};

QStringList withoutQtArguments(const QStringList& arguments) {
    QStringList kept;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString& argument = arguments[i];
        if (argument == "--") {  // the rest are positional arguments
            kept += arguments.mid(i);
            break;
        }
        const QtArgument* qt = nullptr;
        QString name = argument.mid(argument.startsWith("--") ? 2 : 1);
        const qsizetype equals = name.indexOf('=');
        if (equals >= 0)
            name.truncate(equals);
        if (i > 0 && argument.startsWith('-'))
            for (const QtArgument& a : kQtArguments)
                if (name == QLatin1String(a.name))
                    qt = &a;
        if (!qt)
            kept << argument;
        else if (qt->takesValue && equals < 0)
            ++i;  // and its value
    }
    return kept;
}

void describe(QCommandLineParser& parser) {
    parser.setApplicationDescription(
        "tdstudio: look inside what PyTorch users keep tensors in: tensordict memmap\n"
        "directories and .tdz archives, torch.save checkpoints (.pt, .pth), safetensors\n"
        "and NumPy .npy/.npz files, sharded models and distributed checkpoints (DCP),\n"
        "on disk, on web servers (http://, https://) or in S3 buckets (s3://); compare,\n"
        "check, convert and export them.\n\n"
        "Exit codes: 0 success; 1 when something could not be read or written (--diff:\n"
        "the two differ); 2 for a command-line error (--diff: any error).");
    // Not addHelpOption(): its --help-all promises Qt's options, which QApplication takes.
    parser.addOption({{"?", "h", "help"}, "Print this help and exit."});
    parser.addOption(
        {{"v", "version"}, "Print the versions of tdstudio and of the libraries it uses."});
    parser.addPositionalArgument(
        "path",
        "A file, a folder or an http(s):// or s3:// location to open (--save: SRC DEST; "
        "--diff: A B).",
        "[path]");
    parser.addOption(
        {"info",
         "Print every node, leaf and non-tensor value of PATH and exit (no display needed)."});
    parser.addOption({"json",
                      "With --info: one JSON document (the fixtures' .expected.json "
                      "conventions). With --diff: the differences as JSON. With --series: "
                      "the figures as JSON."});
    parser.addOption({"sha256", "With --info: the sha256 of each leaf's raw C-order bytes."});
    parser.addOption({"stats",
                      "With --info: each leaf's min, max, mean, std (population) and "
                      "NaN and Inf counts, over its values decoded to float64."});
    parser.addOption({"select",
                      "Select the key K when PATH opens (a/b, or a JSON list; [] for the root of a "
                      "file of one tensor).",
                      "K"});
    parser.addOption({"view",
                      "With --select: show the leaf in the view MODE, named as its tab in "
                      "lower case (table, image, plot, statistics), instead of the view last "
                      "used for its shape.",
                      "MODE"});
    parser.addOption({"compare", "Open B beside PATH to compare them.", "B"});
    parser.addOption({"screenshot",
                      "Open PATH, save the main window as a PNG to FILE once it shows what was "
                      "asked, and exit.",
                      "FILE"});
    parser.addOption({"window-size",
                      "Open the window at W x H pixels (such as 1024x700), whatever size it "
                      "had last.",
                      "WxH"});
    parser.addOption(
        {"save",
         "Convert or export: tdstudio --save SRC DEST (a directory, or an archive for *.tdz)."});
    parser.addOption(
        {"archive", "With --save: write one .tdz zip archive whatever DEST is called."});
    parser.addOption(
        {"compression", "With --save: stored, deflate, bzip2 or lzma (archives only).", "M"});
    parser.addOption({"level",
                      "With --save and --compression: the level, -1 (the default) or 0 to 9 "
                      "(bzip2: 1 to 9).",
                      "N", "-1"});
    parser.addOption({"threads",
                      "With --save: writer threads (default: one per core; 0 or 1: one). With "
                      "--diff, --check and --series: reading threads (0: one per core).",
                      "N", "0"});
    parser.addOption({"atomic", "With --save: write under a temporary name and rename onto DEST."});
    parser.addOption({"no-robust-key", "With --save: raw key names as file names (legacy)."});
    parser.addOption({"allow-outside-links",
                      "With --save: copy files that the source links to from outside its "
                      "directory (refused by default)."});
    parser.addOption({"skip-objects",
                      "With --save: leave out the Python objects of a checkpoint, and parts "
                      "tdstudio does not decode (quantized tensors, NumPy string arrays), which a "
                      "tensordict cannot hold (refused by default), and name each one."});
    parser.addOption({"key",
                      "With --save, --diff or --series: only this subtree (a/b, or a JSON "
                      "list); repeatable.",
                      "K"});
    parser.addOption({"format",
                      "With --save: tensordict (a directory, or an archive for *.tdz), "
                      "safetensors (one file: dotted keys, tensors only) or hf (a folder of "
                      "safetensors shards and their index, as transformers' save_pretrained); "
                      "by default *.safetensors is safetensors, anything else tensordict.",
                      "F"});
    parser.addOption({"max-shard-size",
                      "With --save --format hf: the largest shard, such as 5GB (the default, "
                      "10^9 bytes each), 2GiB (2^30) or a number of bytes.",
                      "S"});
    parser.addOption({"key-name",
                      "With --save of a file that holds one tensor (an .npy, a bare .pt): "
                      "save it under the key NAME of a new tensordict.",
                      "NAME"});
    parser.addOption({"diff",
                      "Compare two tensordicts: tdstudio --diff A B. Exit code 0 when "
                      "they are equal, 1 when they differ."});
    parser.addOption(
        {"rtol", "With --diff: relative tolerance, as torch.testing.assert_close.", "R", "0"});
    parser.addOption({"atol", "With --diff: absolute tolerance.", "T", "0"});
    parser.addOption({"equal-nan", "With --diff: NaN equals NaN."});
    parser.addOption({"check",
                      "Verify PATH against everything its format promises (every CRC-32, the "
                      "zip structure, each meta.json against its files, what would not load "
                      "elsewhere, temporaries left beside it); one line per problem. Errors are "
                      "data that is lost, damaged or unreadable; warnings are what loads "
                      "exactly but deserves a look (unaligned payloads, a file longer than its "
                      "leaf, files nothing names, __main__ classes, pickle sidecars, links out "
                      "of the dataset, stale temporaries, access points that do not fit). Exit "
                      "code 0 when there is nothing worse than warnings (the summary counts "
                      "them), 1 when there are errors, 2 when PATH cannot be checked."});
    parser.addOption({"strict", "With --check: warnings fail too (exit code 1)."});
    parser.addOption({"series",
                      "Compare checkpoints along training steps: tdstudio --series F1 F2 ... "
                      "(any format that opens; one FOLDER: its members in natural order). For "
                      "each tensor key and step: norm (L2), mean, std (population), min and max "
                      "over the finite values decoded to float64, and against the step before "
                      "the largest |change|, the fraction of elements changed and the cosine "
                      "similarity; '-' (null in JSON) where a key is missing or for the first "
                      "step."});
    parser.addOption({"repair",
                      "With --check: fix what can be fixed without guessing (stale CRC-32s of "
                      "stored entries, stale temporaries), atomically, then check again. Never "
                      "changes a tensor's bytes or a meta.json."});
    parser.addOption({"dry-run", "With --repair: say what it would do, change nothing."});
    parser.addOption({"all-rows",
                      "A replay buffer dump (TorchRL ReplayBuffer.dumps) shows every row of its "
                      "storage, valid or not, instead of its valid rows only (with --info, "
                      "--save, --diff, or the window)."});
    parser.addOption({"storage-order",
                      "A replay buffer dump shows its rows in storage order instead of oldest "
                      "first (with --info, --save, --diff, or the window)."});
    parser.addOption({"valid-rows",
                      "With --save: SRC must be a replay buffer dump; write its valid rows "
                      "oldest first, with the sampler's priorities as the leaf \"priority\", "
                      "as one tensordict."});
    parser.addOption({"insecure",
                      "Read https:// URLs without checking the server's certificate: only for "
                      "a self-signed test server, never for data that matters (trust a CA "
                      "with TDSTUDIO_HTTP_CA_FILE instead)."});
}

constexpr unsigned bit(Mode mode) {
    return 1u << static_cast<unsigned>(mode);
}

// The modes each option belongs to.
struct OptionModes {
    const char* name;
    unsigned modes;
};
const OptionModes kOptionModes[] = {
    {"json", bit(Mode::Info) | bit(Mode::Diff) | bit(Mode::Check) | bit(Mode::Series)},
    {"sha256", bit(Mode::Info)},
    {"stats", bit(Mode::Info)},
    {"select", bit(Mode::Gui)},
    {"view", bit(Mode::Gui)},
    {"compare", bit(Mode::Gui)},
    {"screenshot", bit(Mode::Gui)},
    {"window-size", bit(Mode::Gui)},
    {"archive", bit(Mode::Save)},
    {"compression", bit(Mode::Save)},
    {"level", bit(Mode::Save)},
    {"threads", bit(Mode::Save) | bit(Mode::Diff) | bit(Mode::Check) | bit(Mode::Series)},
    {"atomic", bit(Mode::Save)},
    {"no-robust-key", bit(Mode::Save)},
    {"allow-outside-links", bit(Mode::Save)},
    {"skip-objects", bit(Mode::Save)},
    {"key", bit(Mode::Save) | bit(Mode::Diff) | bit(Mode::Series)},
    {"key-name", bit(Mode::Save)},
    {"format", bit(Mode::Save)},
    {"max-shard-size", bit(Mode::Save)},
    {"rtol", bit(Mode::Diff)},
    {"atol", bit(Mode::Diff)},
    {"equal-nan", bit(Mode::Diff)},
    {"repair", bit(Mode::Check)},
    {"dry-run", bit(Mode::Check)},
    {"strict", bit(Mode::Check)},
    {"all-rows", bit(Mode::Gui) | bit(Mode::Info) | bit(Mode::Save) | bit(Mode::Diff)},
    {"storage-order", bit(Mode::Gui) | bit(Mode::Info) | bit(Mode::Save) | bit(Mode::Diff)},
    {"valid-rows", bit(Mode::Save)},
    {"insecure", bit(Mode::Gui) | bit(Mode::Info) | bit(Mode::Save) | bit(Mode::Diff) |
                     bit(Mode::Check) | bit(Mode::Series)},
};
// Options that take one value; --key is the repeatable one.
const char* const kSingleValued[] = {
    "select",  "view", "compare",     "screenshot", "rtol",   "compression",   "level",
    "threads", "atol", "window-size", "key-name",   "format", "max-shard-size"};

QString modeOption(Mode mode) {
    switch (mode) {
        case Mode::Info:
            return "--info";
        case Mode::Save:
            return "--save";
        case Mode::Diff:
            return "--diff";
        case Mode::Check:
            return "--check";
        case Mode::Series:
            return "--series";
        default:
            return {};
    }
}

// "--json needs --info or --diff", "--sha256 cannot be used with --save (only with --info)".
QString misplaced(const OptionModes& option, Mode mode) {
    const QString name = QString("--") + option.name;
    QStringList consoleModes;
    for (Mode m : {Mode::Info, Mode::Save, Mode::Diff, Mode::Check, Mode::Series})
        if (option.modes & bit(m))
            consoleModes << modeOption(m);
    if (mode == Mode::Gui)
        return name + " needs " + consoleModes.join(" or ");
    if ((option.modes & bit(Mode::Gui)) && consoleModes.isEmpty())
        return name + " cannot be used with " + modeOption(mode) + " (it is for the window)";
    if (option.modes & bit(Mode::Gui))
        return name + " cannot be used with " + modeOption(mode) + " (only with " +
               consoleModes.join(" or ") + ", or the window)";
    return name + " cannot be used with " + modeOption(mode) + " (only with " +
           consoleModes.join(" or ") + ")";
}

std::optional<int> integerValue(const QCommandLineParser& parser, const QString& name, int min,
                                int max, const QString& allowed, QString* error) {
    const QString text = parser.value(name);
    bool ok = false;
    const int value = text.toInt(&ok);
    if (!ok)
        *error = QString("--%1: \"%2\" is not an integer (%3)").arg(name, text, allowed);
    else if (value < min || value > max)
        *error = QString("--%1: %2 is out of range (%3)").arg(name, text, allowed);
    return ok && error->isEmpty() ? std::optional<int>(value) : std::nullopt;
}

std::optional<double> toleranceValue(const QCommandLineParser& parser, const QString& name,
                                     QString* error) {
    const QString text = parser.value(name);
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok || !std::isfinite(value) || value < 0) {
        *error =
            QString("--%1: \"%2\" is not a number of 0 or more (such as 1e-5)").arg(name, text);
        return std::nullopt;
    }
    return value;
}

// The checks in order; each returns the error, or an empty string.
QString checkSyntax(QCommandLineParser& parser, const QStringList& arguments) {
    if (!parser.parse(withoutQtArguments(arguments)))
        return parser.errorText();
    for (const char* name : kSingleValued)
        if (parser.values(name).size() > 1)
            return QString("--%1 is given more than once").arg(name);
    return {};
}

QString checkModes(const QCommandLineParser& parser, Mode* mode) {
    QStringList modes;
    for (Mode m : {Mode::Info, Mode::Save, Mode::Diff, Mode::Check, Mode::Series})
        if (parser.isSet(modeOption(m).mid(2))) {
            modes << modeOption(m);
            *mode = m;
        }
    if (modes.size() > 1)
        return modes.join(" and ") + " cannot be used together";
    for (const OptionModes& option : kOptionModes)
        if (parser.isSet(option.name) && !(option.modes & bit(*mode)))
            return misplaced(option, *mode);
    return {};
}

QString checkPositional(const QStringList& args, Mode mode) {
    qsizetype needed = 1;
    QString missing;
    switch (mode) {
        case Mode::Info:
            missing = "--info needs a PATH";
            break;
        case Mode::Save:
            needed = 2, missing = "--save needs SRC and DEST";
            break;
        case Mode::Diff:
            needed = 2, missing = "--diff needs A and B";
            break;
        case Mode::Check:
            missing = "--check needs a PATH";
            break;
        case Mode::Series:  // any number of steps
            return args.isEmpty() ? "--series needs checkpoints F1 F2 ... or a FOLDER of them"
                                  : QString();
        default:  // the window: PATH is optional
            break;
    }
    if (args.size() < needed && !missing.isEmpty())
        return missing;
    if (args.size() > needed)
        return QString("unexpected argument \"%1\"").arg(args[needed]);
    return {};
}

QString readWindow(const QCommandLineParser& parser, const QStringList& args,
                   const std::function<QStringList()>& viewNames, WindowRequest* window) {
    window->path = args.value(0);
    for (const char* name : {"select", "view", "compare", "screenshot"})
        if (parser.isSet(name) && window->path.isEmpty())
            return QString("--%1 needs a PATH to open").arg(name);
    if (parser.isSet("select")) {
        window->selectText = parser.value("select");
        QString error;
        const std::optional<QStringList> path = parseKeyPath(window->selectText, &error);
        if (!path)
            return "--select: " + error;
        window->select = *path;
    }
    if (parser.isSet("view")) {
        const QStringList names = viewNames();
        if (!names.contains(parser.value("view")))
            return QString("--view: \"%1\" is not one of %2")
                .arg(parser.value("view"), names.join(", "));
        if (!parser.isSet("select"))
            return "--view needs --select (the leaf to show)";
        if (parser.isSet("compare"))
            return "--view cannot be used with --compare (the comparison replaces the preview)";
        window->view = parser.value("view");
    }
    if (parser.isSet("compare") && parser.value("compare").isEmpty())
        return "--compare needs the path B to compare with";
    if (parser.isSet("screenshot") && parser.value("screenshot").isEmpty())
        return "--screenshot needs a FILE";
    window->compare = parser.value("compare");
    window->screenshot = parser.value("screenshot");
    if (parser.isSet("window-size")) {
        // The smallest window whose parts still show (the tree, the preview, the menus).
        constexpr int kMinWidth = 640, kMinHeight = 480, kMax = 16384;
        const QStringList wh = parser.value("window-size").toLower().split('x');
        bool okW = false, okH = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0;
        const int h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
        if (!okW || !okH)
            return QString("--window-size: \"%1\" is not WIDTHxHEIGHT (such as 1024x700)")
                .arg(parser.value("window-size"));
        if (w < kMinWidth || h < kMinHeight || w > kMax || h > kMax)
            return QString("--window-size: %1x%2 is out of range (%3x%4 to %5x%5)")
                .arg(w)
                .arg(h)
                .arg(kMinWidth)
                .arg(kMinHeight)
                .arg(kMax);
        window->width = w;
        window->height = h;
    }
    return {};
}

QString readKeys(const QCommandLineParser& parser, QStringList* keys) {
    for (const QString& key : parser.values("key")) {
        QString error;
        const std::optional<QStringList> path = parseKeyPath(key, &error);
        if (!path)
            return "--key: " + error;
        if (path->isEmpty())
            return "--key: [] is the whole tensordict; leave --key out to take all of it";
        *keys << key;
    }
    return {};
}

QString readSave(const QCommandLineParser& parser, const QStringList& args, SaveRequest* save) {
    save->source = args[0];
    save->destination = args[1];
    QString methodName = "deflate";  // for messages about --level without --compression
    if (parser.isSet("compression")) {
        methodName = parser.value("compression");
        save->compression = tensordict::zipMethodFromName(methodName.toStdString());
        if (!save->compression)
            return QString("--compression: \"%1\" is not one of stored, deflate, bzip2, lzma")
                .arg(methodName);
        methodName = QString::fromStdString(tensordict::zipMethodName(*save->compression));
    }
    if (parser.isSet("level")) {
        // zlib and liblzma take 0 to 9, libbz2 1 to 9; -1 is each one's default.
        const bool bzip2 = save->compression == tensordict::kZipBzip2;
        const QString allowed = QString("-1, or %1 to 9 for %2").arg(bzip2 ? 1 : 0).arg(methodName);
        QString error;
        const std::optional<int> level = integerValue(parser, "level", -1, 9, allowed, &error);
        if (!level)
            return error;
        if (!save->compression || *save->compression == tensordict::kZipStored)
            return "--level needs --compression deflate, bzip2 or lzma";
        if (bzip2 && *level == 0)
            return QString("--level: 0 is out of range (%1)").arg(allowed);
        save->level = *level;
    }
    QString error;
    const std::optional<int> threads =
        integerValue(parser, "threads", 0, 1 << 16, "0 or more; 0 or 1: one", &error);
    if (!threads)
        return error;
    // Unset: every core, as pigz does; the output is the same for any count.
    save->threads =
        parser.isSet("threads") ? *threads : int(std::max(1u, std::thread::hardware_concurrency()));
    save->archive = parser.isSet("archive");
    save->atomic = parser.isSet("atomic");
    save->robustKey = !parser.isSet("no-robust-key");
    save->allowOutsideLinks = parser.isSet("allow-outside-links");
    save->skipObjects = parser.isSet("skip-objects");
    save->validRows = parser.isSet("valid-rows");
    if (parser.isSet("format")) {
        const QString format = parser.value("format");
        if (format == "tensordict")
            save->format = tensordict::SaveFormat::Tensordict;
        else if (format == "safetensors")
            save->format = tensordict::SaveFormat::Safetensors;
        else if (format == "hf")
            save->format = tensordict::SaveFormat::HuggingFace;
        else
            return QString("--format: \"%1\" is not one of tensordict, safetensors, hf")
                .arg(format);
        if (save->format != tensordict::SaveFormat::Tensordict &&
            (save->archive || save->compression))
            return QString(
                       "--format %1 writes safetensors: --archive and --compression apply "
                       "to tensordicts only")
                .arg(format);
    }
    if (parser.isSet("max-shard-size")) {
        if (save->format != tensordict::SaveFormat::HuggingFace)
            return "--max-shard-size needs --format hf";
        const std::optional<std::uint64_t> size =
            nodetext::byteSizeFromText(parser.value("max-shard-size"));
        if (!size || *size == 0)
            return QString(
                       "--max-shard-size: \"%1\" is not a size (such as 5GB, 500MB, 2GiB "
                       "or a number of bytes above 0)")
                .arg(parser.value("max-shard-size"));
        save->maxShardSize = *size;
    }
    save->keyName = parser.value("key-name");
    if (parser.isSet("key-name") && save->keyName.isEmpty())
        return "--key-name: the name cannot be empty";
    return readKeys(parser, &save->keys);
}

QString readCheck(const QCommandLineParser& parser, const QStringList& args, CheckRequest* check) {
    check->path = args[0];
    QString error;
    const std::optional<int> threads =
        integerValue(parser, "threads", 0, 1 << 16, "0 or more; 0: one per core", &error);
    if (!threads)
        return error;
    if (parser.isSet("dry-run") && !parser.isSet("repair"))
        return "--dry-run needs --repair (--check alone changes nothing)";
    check->threads = *threads;
    check->json = parser.isSet("json");
    check->repair = parser.isSet("repair");
    check->dryRun = parser.isSet("dry-run");
    check->strict = parser.isSet("strict");
    return {};
}

QString readDiff(const QCommandLineParser& parser, const QStringList& args, DiffRequest* diff) {
    diff->a = args[0];
    diff->b = args[1];
    QString error;
    const std::optional<double> rtol = toleranceValue(parser, "rtol", &error);
    if (!rtol)
        return error;
    const std::optional<double> atol = toleranceValue(parser, "atol", &error);
    if (!atol)
        return error;
    const std::optional<int> threads =
        integerValue(parser, "threads", 0, 1 << 16, "0 or more; 0: one per core", &error);
    if (!threads)
        return error;
    diff->rtol = *rtol;
    diff->atol = *atol;
    diff->threads = *threads;
    diff->equalNan = parser.isSet("equal-nan");
    diff->json = parser.isSet("json");
    return readKeys(parser, &diff->keys);
}

}  // namespace

std::optional<QStringList> parseKeyPath(const QString& key, QString* error) {
    const QString expected = QString(
                                 "\"%1\" is not a key (a/b, or a JSON list of strings such "
                                 "as [\"a/b\", \"c\"])")
                                 .arg(key);
    if (key.isEmpty()) {
        *error = expected;
        return std::nullopt;
    }
    if (!key.startsWith('['))
        return key.split('/');
    QStringList path;
    try {
        const tensordict::Value list = tensordict::parseJson(key.toStdString(), "key");
        if (list.isList())
            for (const tensordict::Value& k : list.asList()) {
                if (!k.isString())
                    break;
                path << QString::fromStdString(k.asString());
            }
        // [] is the root (a file of one tensor is its own root leaf).
        if (!list.isList() || path.size() != static_cast<qsizetype>(list.asList().size())) {
            *error = expected;
            return std::nullopt;
        }
    } catch (const std::exception&) {
        *error = expected;
        return std::nullopt;
    }
    return path;
}

ParseResult parseArguments(const QStringList& arguments, const QStringList& viewNames) {
    return parseArguments(arguments, [&viewNames] { return viewNames; });
}

ParseResult parseArguments(const QStringList& arguments,
                           const std::function<QStringList()>& viewNames) {
    ParseResult result;
    Options& options = result.options;
    QCommandLineParser parser;
    describe(parser);
    result.error = checkSyntax(parser, arguments);
    if (!result.error.isEmpty())
        return result;
    if (parser.isSet("help")) {
        options.mode = Mode::Help;
        return result;
    }
    if (parser.isSet("version")) {
        options.mode = Mode::Version;
        return result;
    }
    const QStringList args = parser.positionalArguments();
    result.error = checkModes(parser, &options.mode);
    if (result.error.isEmpty())
        result.error = checkPositional(args, options.mode);
    if (!result.error.isEmpty())
        return result;
    options.insecure = parser.isSet("insecure");
    options.replayRows = {parser.isSet("all-rows"), parser.isSet("storage-order")};
    if (parser.isSet("valid-rows") && (parser.isSet("all-rows") || parser.isSet("storage-order"))) {
        result.error = QString(
                           "--valid-rows writes the valid rows oldest first: it cannot be "
                           "used with %1")
                           .arg(parser.isSet("all-rows") ? "--all-rows" : "--storage-order");
        return result;
    }
    switch (options.mode) {
        case Mode::Info:
            options.info = {args[0], parser.isSet("json"), parser.isSet("sha256"),
                            parser.isSet("stats")};
            break;
        case Mode::Save:
            result.error = readSave(parser, args, &options.save);
            break;
        case Mode::Diff:
            result.error = readDiff(parser, args, &options.diff);
            break;
        case Mode::Check:
            result.error = readCheck(parser, args, &options.check);
            break;
        case Mode::Series: {
            options.series.paths = args;
            options.series.json = parser.isSet("json");
            const std::optional<int> threads = integerValue(
                parser, "threads", 0, 1 << 16, "0 or more; 0: one per core", &result.error);
            if (threads) {
                options.series.threads = *threads;
                result.error = readKeys(parser, &options.series.keys);
            }
            break;
        }
        default:
            result.error = readWindow(parser, args, viewNames, &options.window);
            break;
    }
    return result;
}

QString usageText() {
    return QString::fromLatin1(kUsage);
}

QString helpText() {
    QCommandLineParser parser;
    describe(parser);
    // Qt's first line names the executable as started (or "<executable_name>"
    // without an application object): the usage of every mode instead.
    const QString qt = parser.helpText();
    return usageText() + qt.mid(qt.indexOf('\n') + 1);
}

std::vector<std::vector<std::string>> keyPaths(const QStringList& keys) {
    std::vector<std::vector<std::string>> paths;
    for (const QString& key : keys) {
        QString error;
        const std::optional<QStringList> path = parseKeyPath(key, &error);
        if (!path)
            throw tensordict::Error::invalid("--key", error.toStdString());
        std::vector<std::string>& parts = paths.emplace_back();
        for (const QString& part : *path)
            parts.push_back(part.toStdString());
    }
    return paths;
}

}  // namespace cli
