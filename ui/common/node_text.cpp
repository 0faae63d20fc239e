#include "node_text.h"

#include "tensordict/store.h"

#include <cstring>

#include <QLocale>

#include <QCoreApplication>
#include <QStringList>

using tensordict::Node;
using tensordict::NodeKind;

namespace nodetext {

QString tr(const char* text) {
    return QCoreApplication::translate("nodetext", text);
}

QString displayKey(const std::string& key) {
    if (key.empty())
        return QStringLiteral("\"\"");
    return displayText(key);
}

QString displayText(const std::string& text) {
    QString out;
    for (const QChar c : QString::fromStdString(text)) {
        if (c == '\t')
            out += "\\t";
        else if (c == '\n')
            out += "\\n";
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QString("\\x%1").arg(c.unicode(), 2, 16, QChar('0'));
        else
            out += c;
    }
    return out;
}

QString countText(std::int64_t n, const QString& one, const QString& many) {
    return QString("%1 %2").arg(QLocale().toString(qlonglong(n)), n == 1 ? one : many);
}

QString exportStem(const tensordict::Node* node) {
    if (!node || !node->parent() || node->key().empty())
        return QStringLiteral("tensor");
    QString stem = QString::fromStdString(node->key());
    for (QChar& c : stem)
        if (c == '/' || c == '\\' || c.unicode() < 0x20 || c.unicode() == 0x7f)
            c = '_';
    return stem;
}

std::uint64_t totalBytesOf(const Node& node) {
    std::uint64_t total = node.isTensor() ? node.leaf().dataBytes() : 0;
    for (const auto& c : node.children())
        total += totalBytesOf(*c);
    return total;
}

QString torchDtypeText(tensordict::DType dtype) {
    const std::string_view name = tensordict::dtypeName(dtype);
    return QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
}

QString leafDtypeText(const Node& leaf) {
    if (!leaf.store())
        return torchDtypeText(leaf.leaf().dtype);
    return QString::fromStdString(leaf.store()->dtypeNameInFile(leaf.leaf().dtype));
}

QString dtypeText(tensordict::DType dtype) {
    QString text = torchDtypeText(dtype);
    if (text.startsWith(QLatin1String("torch.")))
        text.remove(0, 6);
    return text;
}

QString shapeText(const std::vector<std::int64_t>& shape) {
    QString text(QLatin1Char('['));
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i)
            text += QLatin1String(", ");
        text += QString::number(shape[i]);
    }
    return text + QLatin1Char(']');
}

std::optional<std::uint64_t> byteSizeFromText(const QString& text) {
    struct Unit {
        const char* suffix;
        std::uint64_t bytes;
    };
    static const Unit kUnits[] = {
        {"TIB", 1ull << 40},
        {"GIB", 1ull << 30},
        {"MIB", 1ull << 20},
        {"KIB", 1ull << 10},
        {"TB", 1'000'000'000'000ull},
        {"GB", 1'000'000'000ull},
        {"MB", 1'000'000ull},
        {"KB", 1'000ull},
        {"B", 1},
    };
    const QString upper = text.trimmed().toUpper();
    std::uint64_t unit = 1;
    QString number = upper;
    for (const Unit& u : kUnits)
        if (upper.endsWith(QLatin1String(u.suffix))) {
            unit = u.bytes;
            number = upper.chopped(qsizetype(std::strlen(u.suffix))).trimmed();
            break;
        }
    bool ok = false;
    const double value = number.toDouble(&ok);
    if (!ok || !(value >= 0) || value * double(unit) > 1e18)
        return std::nullopt;
    return static_cast<std::uint64_t>(value * double(unit));
}

QString byteSizeText(std::uint64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 5)
        v /= 1024, ++u;
    return u == 0 ? QString("%1 B").arg(bytes)
                  : QString("%1 %2").arg(v, 0, 'f', v < 10 ? 2 : 1).arg(units[u]);
}

QString keyPathText(const std::vector<std::string>& path) {
    // A Python expression that indexes the tensordict: td["a", "b"].
    QStringList parts;
    for (const auto& k : path) {
        QString s = QString::fromStdString(k);
        s.replace("\\", "\\\\").replace("\"", "\\\"");
        parts << "\"" + displayText(s.toStdString()) + "\"";
    }
    if (parts.size() == 1)
        return parts.front();
    return "(" + parts.join(", ") + ")";
}

QString kindText(const Node& node) {
    if (node.isUnread())
        return tr("not read");
    const std::string_view name = tensordict::kindName(node.kind());
    return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

QString storageText(const Node& node) {
    using tensordict::StorageKind;
    if (!node.isTensor())
        return {};
    switch (node.leaf().storage.kind) {
        case StorageKind::None:
            return tr("no file (empty)");
        case StorageKind::File:
            return node.leaf().storage.outsideTarget().empty()
                       ? tr("file")
                       : tr("file, linked from outside the dataset");
        case StorageKind::Memory:
            return tr("memory");
        case StorageKind::Chunks:
            return tr("chunks");
        case StorageKind::StoredEntry:
            return tr("stored entry");
        case StorageKind::CompressedEntry:
            return tr("compressed entry (%1)")
                .arg(QString::fromStdString(
                    tensordict::zipMethodName(node.leaf().storage.zipMethod)));
    }
    return {};
}

}  // namespace nodetext
