#include "save_command.h"

#include "load_settings.h"

#include <unistd.h>

#include <QElapsedTimer>
#include <algorithm>

#include "node_text.h"
#include "open_failure.h"
#include "options.h"
#include "tensordict/datasets.h"
#include "tensordict/error.h"
#include "tensordict/save.h"

namespace cli {
namespace {

// Shows save progress on `err`: in place on a terminal; on anything else
// (a log, a pipe) as plain lines, at most one a second or one per 10%, so
// that a log stays readable and free of control characters.
class ProgressPrinter {
public:
    ProgressPrinter(QTextStream& err, ProgressStyle style) : err_(err), style_(style) {
        clock_.start();
    }

    void update(const tensordict::SaveProgress& p) {
        const double percent =
            p.bytesTotal ? 100.0 * double(p.bytesDone) / double(p.bytesTotal) : 100.0;
        const qint64 ms = clock_.elapsed();
        const double seconds = std::max(1e-3, ms / 1000.0);
        const QString text =
            QString("%1%  %2 / %3  files %4/%5  %6/s  %7")
                .arg(percent, 5, 'f', 1)
                .arg(nodetext::byteSizeText(p.bytesDone), nodetext::byteSizeText(p.bytesTotal))
                .arg(p.filesDone)
                .arg(p.filesTotal)
                .arg(nodetext::byteSizeText(
                    static_cast<std::uint64_t>(double(p.bytesDone) / seconds)))
                .arg(QString::fromStdString(p.currentPath).left(60));
        if (style_ == ProgressStyle::Terminal) {
            err_ << '\r' << text << "\x1b[K";
        } else {
            const int decile = static_cast<int>(percent / 10);
            if (decile <= lastDecile_ && ms - lastLineMs_ < 1000)
                return;
            lastDecile_ = decile;
            lastLineMs_ = ms;
            err_ << text.trimmed() << '\n';
        }
        err_.flush();
        shown_ = true;
    }

    void done(const QString& path) {
        const QString text = QString("saved %1 in %2 s").arg(path).arg(clock_.elapsed() / 1000.0);
        if (style_ == ProgressStyle::Terminal)
            err_ << '\r' << text << "\x1b[K\n";
        else
            err_ << text << '\n';
    }

    void failed(const QString& reason) {
        if (style_ == ProgressStyle::Terminal && shown_)
            err_ << '\n';  // keep the last progress line, where it stopped
        err_ << "tdstudio: " << reason << '\n';
    }

private:
    QTextStream& err_;
    const ProgressStyle style_;
    QElapsedTimer clock_;
    bool shown_ = false;
    int lastDecile_ = 0;
    qint64 lastLineMs_ = 0;
};

}  // namespace

ProgressStyle progressStyleForStderr() {
    // A dumb terminal cannot erase a line: plain lines there too.
    return ::isatty(STDERR_FILENO) && qgetenv("TERM") != "dumb" ? ProgressStyle::Terminal
                                                                : ProgressStyle::Lines;
}

int save(const SaveRequest& request, QTextStream& err, ProgressStyle style) {
    ProgressPrinter printer(err, style);
    tensordict::SaveOptions options;
    if (request.compression)
        options.compression = *request.compression;
    if (request.archive)
        options.archive = true;
    options.compressionLevel = request.level;
    options.numThreads = request.threads;
    options.atomic = request.atomic;
    options.robustKey = request.robustKey;
    options.allowOutsideLinks = request.allowOutsideLinks;
    options.skipObjects = request.skipObjects;
    options.format = request.format;
    options.maxShardSize = request.maxShardSize;
    const bool safetensors = request.format ? *request.format != tensordict::SaveFormat::Tensordict
                                            : request.destination.endsWith(".safetensors");
    options.skipped = [&err, safetensors](const std::string& key) {
        err << "skipped " << QString::fromStdString(key)
            << (safetensors ? ": not a tensor tdstudio can write to safetensors\n"
                            : ": a Python object, or a part tdstudio does not decode, which a "
                              "tensordict cannot hold\n");
        err.flush();
    };
    options.copyExisting = true;  // converting means copying out of the source
    options.progress = [&printer](const tensordict::SaveProgress& p) { printer.update(p); };
    try {
        const std::vector<std::vector<std::string>> paths = keyPaths(request.keys);
        tensordict::TensorDict source = tensordict::load(
            request.source.toStdString(), loadOptionsFromSettings(/*tolerant=*/false));
        if (request.validRows &&
            !(source.root().store() && tensordict::replayBufferFacts(*source.root().store())))
            throw tensordict::Error::invalid(request.source.toStdString(),
                                             "--valid-rows: not a replay buffer dump (a folder "
                                             "written by TorchRL's ReplayBuffer.dumps)");
        if (!paths.empty())
            source = tensordict::select(source, paths);
        if (!request.keyName.isEmpty()) {
            if (!source.root().isTensor())
                throw tensordict::Error::invalid(
                    "--key-name", "the source is not one tensor: its keys are saved as they are");
            source = tensordict::underKey(source, request.keyName.toStdString());
        }
        // Written, not loaded back: the command needs only the files.
        printer.done(QString::fromStdString(
            tensordict::saveFiles(source, request.destination.toStdString(), options)));
        return 0;
    } catch (const std::exception& e) {
        printer.failed(commandLineFailure(e));
        return 1;
    }
}

}  // namespace cli
