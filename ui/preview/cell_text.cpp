#include "cell_text.h"

#include <QStringList>
#include <algorithm>
#include <vector>

#include "tensordict/guarded_read.h"

using tensordict::DType;
using tensordict::DTypeCategory;
using tensordict::Notation;

namespace {

// Copies element `flat` out of a mapping that may have lost its pages.
bool readElement(const tensordict::LeafBytes& bytes, DType dtype, std::int64_t flat,
                 std::byte* out) {
    const std::size_t item = tensordict::itemSize(dtype);
    const auto offset = static_cast<std::size_t>(flat) * item;
    return offset + item <= bytes.size &&
           tensordict::tryGuardedCopy(out, bytes.data.get() + offset, item);
}

// A - B as the element of the dtype that holds it: complex if either side
// is, an int64 if both are integers, else a float64 (equal infinities
// differ by nothing).
DType difference(const std::byte* a, DType aType, const std::byte* b, DType bType, std::byte* out) {
    const auto ca = tensordict::dtypeInfo(aType).category;
    const auto cb = tensordict::dtypeInfo(bType).category;
    if (ca == DTypeCategory::Complex || cb == DTypeCategory::Complex) {
        const auto x = tensordict::elementAsComplex(a, aType);
        const auto y = tensordict::elementAsComplex(b, bType);
        const double d[2] = {x.re - y.re, x.im - y.im};
        std::memcpy(out, d, sizeof d);
        return DType::Complex128;
    }
    const double x = tensordict::elementAsDouble(a, aType);
    const double y = tensordict::elementAsDouble(b, bType);
    if (tensordict::dtypeInfo(aType).isIntegral() && tensordict::dtypeInfo(bType).isIntegral()) {
        const auto d = static_cast<std::int64_t>(x) - static_cast<std::int64_t>(y);
        std::memcpy(out, &d, sizeof d);
        return DType::Int64;
    }
    const double d = x == y ? 0.0 : x - y;
    std::memcpy(out, &d, sizeof d);
    return DType::Float64;
}

}  // namespace

bool CellText::read(std::int64_t row, std::int64_t col, Shown which, std::byte* a, std::byte* b,
                    bool* lost) const {
    // Bytes not there yet (a window of a paged leaf being filled) are not
    // lost: there is nothing to show until they come.
    const bool needA = which != Shown::Other, needB = which != Shown::Leaf;
    if ((needA && !bytes.data) || (needB && !other.data))
        return false;
    const std::int64_t flat = layout.at(row, col);
    const bool ok = (!needA || readElement(bytes, dtype, flat, a)) &&
                    (!needB || readElement(other, otherDtype, flat, b));
    if (!ok && lost)
        *lost = true;
    return ok;
}

DTypeCategory CellText::category(Shown which) const {
    const auto ca = tensordict::dtypeInfo(dtype).category;
    const auto cb = tensordict::dtypeInfo(otherDtype).category;
    switch (which) {
        case Shown::Leaf:
            return ca;
        case Shown::Other:
            return cb;
        case Shown::Difference:
            if (ca == DTypeCategory::Complex || cb == DTypeCategory::Complex)
                return DTypeCategory::Complex;
            return tensordict::dtypeInfo(dtype).isIntegral() &&
                           tensordict::dtypeInfo(otherDtype).isIntegral()
                       ? DTypeCategory::Signed
                       : DTypeCategory::Float;
    }
    return ca;
}

QString CellText::text(std::int64_t row, std::int64_t col, Shown which, Notation notation,
                       bool* lost) const {
    if (!isCell(row, col))
        return {};
    if (!hasOther())
        which = Shown::Leaf;
    std::byte a[16], b[16], d[16];
    if (!read(row, col, which, a, b, lost))
        return QStringLiteral("?");
    const std::byte* element = which == Shown::Other ? b : a;
    DType type = which == Shown::Other ? otherDtype : dtype;
    if (which == Shown::Difference) {
        type = difference(a, dtype, b, otherDtype, d);
        element = d;
        // No difference reads as 0, not as a float's "0." or "-0.".
        if (type == DType::Float64 && tensordict::elementAsDouble(d, type) == 0.0)
            return QStringLiteral("0");
    }
    return QString::fromStdString(
        tensordict::formatElement(element, type, format, precision, notation));
}

Notation CellText::columnNotation(std::int64_t col, std::int64_t first, std::int64_t count,
                                  Shown which, bool* lost) const {
    if (!hasOther())
        which = Shown::Leaf;
    const DTypeCategory c = category(which);
    if (format != tensordict::FloatFormat::Shortest ||
        (c != DTypeCategory::Float && c != DTypeCategory::Complex))
        return Notation::Auto;
    const std::int64_t end = std::min(rows, first + count);
    std::byte a[16], b[16], d[16];
    for (std::int64_t row = std::max<std::int64_t>(first, 0); row < end; ++row) {
        if (!read(row, col, which, a, b, lost))
            continue;
        const std::byte* element = which == Shown::Other ? b : a;
        DType type = which == Shown::Other ? otherDtype : dtype;
        if (which == Shown::Difference) {
            type = difference(a, dtype, b, otherDtype, d);
            element = d;
        }
        const auto z = tensordict::elementAsComplex(element, type);
        if (tensordict::reprIsScientific(z.re) || tensordict::reprIsScientific(z.im))
            return Notation::Scientific;
    }
    return Notation::Positional;
}

bool CellText::differs(std::int64_t row, std::int64_t col, bool* lost) const {
    if (!hasOther() || !isCell(row, col))
        return false;
    std::byte a[16], b[16];
    if (!read(row, col, Shown::Difference, a, b, lost))
        return false;
    return !tensordict::elementsClose(a, dtype, b, otherDtype, tolerance);
}

QString CellText::tsv(const CellSelection& selection, const tensordict::CancelToken& cancel,
                      bool* lost, const std::function<void(double)>& progress) const {
    const CellSelection::Range all{0, 0, rows - 1, cols - 1};
    const CellSelection::Range box = selection.bounds().intersected(all);
    if (box.isEmpty())
        return {};
    // Each column's notation, from the cells of it that are selected.
    std::vector<Notation> notation;
    for (std::int64_t col = box.left; col <= box.right; ++col) {
        Notation n = Notation::Positional;
        for (const CellSelection::Range& r : selection.ranges()) {
            const CellSelection::Range part = r.intersected(box);
            if (part.isEmpty() || col < part.left || col > part.right)
                continue;
            if (cancel.isCancelled())
                return {};
            n = columnNotation(col, part.top, part.rowCount(), shown, lost);
            if (n != Notation::Positional)
                break;
        }
        notation.push_back(n);
    }
    QString out;
    QStringList fields;
    for (std::int64_t row = box.top; row <= box.bottom; ++row) {
        if (cancel.isCancelled())
            return {};
        fields.clear();
        for (std::int64_t col = box.left; col <= box.right; ++col)
            fields << (selection.contains(row, col)
                           ? text(row, col, shown,
                                  notation[static_cast<std::size_t>(col - box.left)], lost)
                           : QString());
        out += fields.join('\t');
        out += '\n';
        if (progress && (row - box.top) % 4096 == 0)
            progress(double(row - box.top) / double(box.rowCount()));
    }
    return out;
}
