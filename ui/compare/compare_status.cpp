#include "compare_status.h"

#include <QHash>
#include <QLocale>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QStringList>

#include "node_text.h"

using Status = CompareTree::Status;
using tensordict::Difference;
using tensordict::Node;
using tensordict::NodeKind;

namespace compare_status {

QString statusText(Status status) {
    switch (status) {
        case Status::Pending:
            return QObject::tr("comparing…");
        case Status::Same:
            return QObject::tr("same");
        case Status::Changed:
            return QObject::tr("changed");
        case Status::OnlyInA:
            return QObject::tr("only in A");
        case Status::OnlyInB:
            return QObject::tr("only in B");
        case Status::Error:
            return QObject::tr("unreadable");
        case Status::NotCompared:
            return QObject::tr("not compared");
    }
    return {};
}

QString itemStatusText(const CompareTree::Item& item) {
    const QString own = statusText(item.status);
    if (item.differingBelow == 0)
        return own;
    const QString inside = QObject::tr("%n inside", "", item.differingBelow);
    return item.status == Status::Same ? QObject::tr("differs: %1").arg(inside)
                                       : QObject::tr("%1, %2").arg(own, inside);
}

QColor statusColor(Status status) {
    switch (status) {
        case Status::Changed:
            return QColor(0xc6, 0x6a, 0x00);
        case Status::OnlyInA:
        case Status::Error:
            return QColor(0xc0, 0x1c, 0x28);
        case Status::OnlyInB:
            return QColor(0x1a, 0x7f, 0x37);
        case Status::Same:
        case Status::Pending:
        case Status::NotCompared:
            break;
    }
    return QColor(0x80, 0x80, 0x80);
}

QColor rowTint(Status status, const QPalette& palette) {
    const QColor base = palette.color(QPalette::Base);
    const QColor c = status == Status::Changed ? QColor(0xff, 0xb0, 0x20) : statusColor(status);
    const double f = 0.16;  // faint: the text stays readable on light and dark palettes
    return QColor::fromRgbF(float(base.redF() * (1 - f) + c.redF() * f),
                            float(base.greenF() * (1 - f) + c.greenF() * f),
                            float(base.blueF() * (1 - f) + c.blueF() * f));
}

QIcon statusIcon(Status status, bool differencesInside) {
    static QHash<int, QIcon> cache;
    const int key = static_cast<int>(status) * 2 + (differencesInside ? 1 : 0);
    if (const auto it = cache.constFind(key); it != cache.constEnd())
        return *it;
    constexpr int kSize = 32;  // drawn large, scaled down crisply
    QPixmap pixmap(kSize, kSize);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const bool inside = differencesInside && (status == Status::Same);
    const QColor color = inside ? statusColor(Status::Changed) : statusColor(status);
    const QRectF dot(5, 5, kSize - 10, kSize - 10);
    if (status == Status::Pending || status == Status::NotCompared || inside) {
        p.setPen(QPen(color, 4));
        p.drawEllipse(dot);
    } else if (status == Status::Same) {
        p.setPen(Qt::NoPen);
        p.setBrush(color.lighter(150));
        p.drawEllipse(dot.adjusted(6, 6, -6, -6));
    } else {
        p.setPen(Qt::NoPen);
        p.setBrush(color);
        p.drawEllipse(dot);
        p.setPen(QPen(Qt::white, 4, Qt::SolidLine, Qt::RoundCap));
        const double c = kSize / 2.0, r = 6;
        if (status == Status::OnlyInA || status == Status::OnlyInB)
            p.drawLine(QPointF(c - r, c), QPointF(c + r, c));
        if (status == Status::OnlyInB)
            p.drawLine(QPointF(c, c - r), QPointF(c, c + r));
        if (status == Status::Changed || status == Status::Error) {
            p.drawLine(QPointF(c, c - r), QPointF(c, c + 1));
            p.drawPoint(QPointF(c, c + r));
        }
    }
    p.end();
    return *cache.insert(key, QIcon(pixmap));
}

QString sideText(const Node* n) {
    if (!n)
        return QStringLiteral("—");
    switch (n->kind()) {
        case NodeKind::Tensor:
            return n->leaf().isNested ? QObject::tr("%1 nested, %2 parts")
                                            .arg(nodetext::dtypeText(n->leaf().dtype))
                                            .arg(n->leaf().nestedShapes.size())
                                      : nodetext::dtypeText(n->leaf().dtype) + " " +
                                            nodetext::shapeText(n->leaf().shape);
        case NodeKind::NonTensorData:
        case NodeKind::NonTensorStack:
            return QObject::tr("non-tensor");
        case NodeKind::Error:
            return QObject::tr("error");
        default: {
            QString cls = QString::fromStdString(n->className());
            cls = cls.mid(cls.lastIndexOf('.') + 1);  // "fixture_classes.MyTC" -> "MyTC"
            // A checkpoint's dict, list or object has no batch size.
            if (n->kind() == NodeKind::Container || n->kind() == NodeKind::Object)
                return cls;
            return cls + " " + nodetext::shapeText(n->batchSize());
        }
    }
}

namespace {

// "value: "hi" → "ho"" for two short plain values, else "value" (it is
// written for every paint of the row: no lists, no long strings).
QString nonTensorText(const Node& a, const Node& b) {
    constexpr std::size_t kShort = 40;
    if (a.kind() != NodeKind::NonTensorData || b.kind() != NodeKind::NonTensorData ||
        a.nonTensor().pickleOpaque || b.nonTensor().pickleOpaque)
        return QObject::tr("value");
    const tensordict::Value x = a.value(), y = b.value();
    auto plain = [](const tensordict::Value& v) {
        return v.isNull() || v.isBool() || v.isNumber() ||
               (v.isString() && v.asString().size() <= kShort);
    };
    if (!plain(x) || !plain(y))
        return QObject::tr("value");
    auto json = [](const tensordict::Value& v) {
        return QString::fromStdString(tensordict::toJson(v, tensordict::JsonStyle::Compact));
    };
    return QObject::tr("value: %1 → %2").arg(json(x), json(y));
}

}  // namespace

QString differenceText(const CompareTree::Item& item) {
    if (item.status == Status::Error)
        return QString::fromStdString(item.error);
    if (item.status != Status::Changed || !item.a || !item.b)
        return {};
    const Node& a = *item.a;
    const Node& b = *item.b;
    QStringList parts;
    for (const Difference d : tensordict::differencesOf(item.differences)) {
        switch (d) {
            case Difference::Class:
                parts << QObject::tr("kind: %1 → %2").arg(sideText(&a), sideText(&b));
                break;
            case Difference::BatchSize:
                parts << QObject::tr("batch size: %1 → %2")
                             .arg(nodetext::shapeText(a.batchSize()),
                                  nodetext::shapeText(b.batchSize()));
                break;
            case Difference::Device:
                parts << QObject::tr("device: %1 → %2")
                             .arg(QString::fromStdString(a.device().value_or("none")),
                                  QString::fromStdString(b.device().value_or("none")));
                break;
            case Difference::DType:
                parts << QObject::tr("dtype: %1 → %2")
                             .arg(nodetext::dtypeText(a.leaf().dtype),
                                  nodetext::dtypeText(b.leaf().dtype));
                break;
            case Difference::Shape:
                parts << QObject::tr("shape: %1 → %2")
                             .arg(nodetext::shapeText(a.leaf().shape),
                                  nodetext::shapeText(b.leaf().shape));
                break;
            case Difference::Values:
                if (item.values) {
                    const QLocale locale;
                    QString text = QObject::tr("values: %1 of %2 differ")
                                       .arg(locale.toString(qulonglong(item.values->differing)),
                                            locale.toString(qlonglong(a.leaf().numel)));
                    if (item.values->maxAbsDiff > 0)
                        text += QObject::tr(", max |A − B| %1")
                                    .arg(QString::number(item.values->maxAbsDiff, 'g', 6));
                    parts << text;
                } else {
                    parts << QObject::tr("values");
                }
                break;
            case Difference::NonTensor:
                parts << nonTensorText(a, b);
                break;
        }
    }
    return parts.join(QLatin1String("; "));
}

QString countsText(const CompareTree::Counts& c) {
    QStringList parts;
    if (c.changed)
        parts << QObject::tr("%n changed", "", static_cast<int>(c.changed));
    if (c.onlyInA)
        parts << QObject::tr("%n only in A", "", static_cast<int>(c.onlyInA));
    if (c.onlyInB)
        parts << QObject::tr("%n only in B", "", static_cast<int>(c.onlyInB));
    if (c.errors)
        parts << QObject::tr("%n unreadable", "", static_cast<int>(c.errors));
    if (c.notCompared)
        parts << QObject::tr("%n not compared", "", static_cast<int>(c.notCompared));
    if (parts.isEmpty())
        return QObject::tr("no differences");
    return parts.join(QLatin1String(", "));
}

}  // namespace compare_status
