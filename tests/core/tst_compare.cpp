// compare(): every fixture equals its re-saved directory and archives;
// copies with exactly one edit report exactly that edit; values, tolerances
// and NaN handling agree with torch.testing.assert_close (run by
// /usr/bin/python3 through tests/support/assert_close.py); key restriction,
// streaming of results, progress, cancel and read errors.

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>

#include "libzip_reader.h"
#include "tensordict/compare.h"
#include "tensordict/element.h"
#include "tensordict/keys.h"
#include "tensordict/save.h"
#include "testsupport.h"
#include "tree/node_builder.h"

using namespace tensordict;
using testsupport::errorOf;

namespace {

using KeyPath = std::vector<std::string>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

QString keyText(const KeyPath& key) {
    return QString::fromStdString(formatKeyPath(key));
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return f.readAll();
}

// Replaces the one occurrence of `from` in the file by `to`; "" or what went wrong.
QString replaceInFile(const QString& path, const QByteArray& from, const QByteArray& to) {
    QByteArray content = readAll(path);
    if (content.count(from) != 1)
        return QString("%1: %2 occurrences of %3").arg(path).arg(content.count(from)).arg(from);
    content.replace(from, to);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(content) != content.size())
        return path + ": cannot write";
    return {};
}

// Overwrites bytes of a file at `offset` (its size stays).
QString patchFile(const QString& path, qint64 offset, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::ReadWrite) || offset + bytes.size() > f.size() || !f.seek(offset) ||
        f.write(bytes) != bytes.size())
        return path + ": cannot patch";
    return {};
}

template <typename T>
QByteArray rawOf(const std::vector<T>& v) {
    return QByteArray(reinterpret_cast<const char*>(v.data()), qsizetype(v.size() * sizeof(T)));
}
template <typename T>
QByteArray rawOf(T value) {
    return QByteArray(reinterpret_cast<const char*>(&value), sizeof value);
}

// Every node under `root` in tree order (pre-order, children in order).
void preorder(const Node& node, KeyPath key, std::vector<KeyPath>& out) {
    out.push_back(key);
    if (!node.isCollection())
        return;
    for (const auto& child : node.children()) {
        KeyPath k = key;
        k.push_back(child->key());
        preorder(*child, std::move(k), out);
    }
}
std::vector<KeyPath> preorder(const Node& root) {
    std::vector<KeyPath> out;
    preorder(root, {}, out);
    return out;
}

const KeyComparison* entryAt(const CompareResult& r, const KeyPath& key) {
    for (const KeyComparison& k : r.keys)
        if (k.key == key)
            return &k;
    return nullptr;
}

QString describe(const KeyComparison& k) {
    QStringList flags;
    for (Difference d : differencesOf(k.differences))
        flags << QString::fromLatin1(differenceName(d).data(), int(differenceName(d).size()));
    QString s = QString("%1: %2 [%3]")
                    .arg(keyText(k.key), QString::fromLatin1(keyStatusName(k.status).data()),
                         flags.join(','));
    if (k.values)
        s += QString(" differing=%1 maxAbs=%2 maxRel=%3 first=%4")
                 .arg(k.values->differing)
                 .arg(k.values->maxAbsDiff)
                 .arg(k.values->maxRelDiff)
                 .arg(k.values->firstIndex);
    if (k.pending)
        s += " pending";
    if (!k.error.empty())
        s += " error=" + QString::fromStdString(k.error);
    return s;
}

QString describe(const CompareResult& r) {
    QStringList lines;
    for (const KeyComparison& k : r.keys)
        lines << describe(k);
    return lines.join("\n");
}

// The same double, within `rel` (infinities and NaN must match exactly).
bool sameDouble(double ours, double theirs, double rel = 1e-9) {
    if (std::isnan(ours) || std::isnan(theirs))
        return std::isnan(ours) && std::isnan(theirs);
    if (std::isinf(ours) || std::isinf(theirs))
        return ours == theirs;
    return ours == theirs || std::abs(ours - theirs) <= rel * std::abs(theirs);
}

// What one key must report.
struct Expected {
    KeyPath key;
    KeyStatus status = KeyStatus::Changed;
    unsigned differences = 0;
    bool hasValues = false;  // values compared (tensor leaves of the same shape)
    ValueDifference values;
    std::vector<std::int64_t> firstIndex;
};

// "" when `r` reports exactly `e` and nothing else: every other key is in
// both, the same, with its values (if compared) equal; otherwise what is wrong.
QString exactlyOneDifference(const CompareResult& r, const Expected& e) {
    QStringList problems;
    if (r.cancelled)
        problems << "cancelled";
    if (r.equal())
        problems << "equal() is true";
    int found = 0;
    for (const KeyComparison& k : r.keys) {
        if (k.pending)
            problems << "pending after compare(): " + describe(k);
        if (k.key == e.key) {
            ++found;
            if (k.status != e.status || k.differences != e.differences ||
                k.values.has_value() != e.hasValues)
                problems << "got " + describe(k);
            if (e.hasValues && k.values) {
                const ValueDifference& v = *k.values;
                if (v.differing != e.values.differing || v.firstIndex != e.values.firstIndex ||
                    !sameDouble(v.maxAbsDiff, e.values.maxAbsDiff) ||
                    !sameDouble(v.maxRelDiff, e.values.maxRelDiff))
                    problems << QString(
                                    "values: got %1, expected differing=%2 maxAbs=%3 "
                                    "maxRel=%4 first=%5")
                                    .arg(describe(k))
                                    .arg(e.values.differing)
                                    .arg(e.values.maxAbsDiff, 0, 'g', 17)
                                    .arg(e.values.maxRelDiff, 0, 'g', 17)
                                    .arg(e.values.firstIndex);
                if (k.firstIndex != e.firstIndex)
                    problems << "firstIndex (multi-dim) differs: " + describe(k);
            }
            if ((k.status == KeyStatus::OnlyInA) != (k.a && !k.b) ||
                (k.status == KeyStatus::OnlyInB) != (!k.a && k.b))
                problems << "a/b pointers do not match the status: " + describe(k);
            continue;
        }
        // Descendants of a key only one side has get no entry.
        if (e.status == KeyStatus::OnlyInA || e.status == KeyStatus::OnlyInB)
            if (k.key.size() > e.key.size() &&
                std::equal(e.key.begin(), e.key.end(), k.key.begin()))
                problems << "descendant of a one-sided key listed: " + describe(k);
        if (k.status != KeyStatus::Same || k.differences != 0 || !k.a || !k.b ||
            (k.values && k.values->differing != 0))
            problems << "unexpected: " + describe(k);
    }
    if (found != 1)
        problems << QString("%1 entries for %2").arg(found).arg(keyText(e.key));
    const std::size_t changed = r.changed().size(), onlyA = r.onlyInA().size(),
                      onlyB = r.onlyInB().size(), errors = r.errors().size();
    if (changed != (e.status == KeyStatus::Changed ? 1u : 0u) ||
        onlyA != (e.status == KeyStatus::OnlyInA ? 1u : 0u) ||
        onlyB != (e.status == KeyStatus::OnlyInB ? 1u : 0u) || errors != 0)
        problems << QString("changed %1, only in A %2, only in B %3, errors %4")
                        .arg(changed)
                        .arg(onlyA)
                        .arg(onlyB)
                        .arg(errors);
    if (!problems.isEmpty())
        problems << "result:\n" + describe(r);
    return problems.join("\n");
}

// Deterministic pseudo-random numbers (splitmix64).
class Random {
public:
    explicit Random(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
    double symmetric() { return 2 * uniform() - 1; }             // [-1, 1)
    template <typename T>
    const T& pick(std::initializer_list<T> values) {
        return values.begin()[next() % values.size()];
    }

private:
    std::uint64_t state_;
};

// Two leaves to compare: A's and B's raw bytes.
struct DataSet {
    QString name;
    DType aType = DType::Float32, bType = DType::Float32;
    std::vector<std::int64_t> shape;
    QByteArray a, b;
};

const char* numpyName(DType d) {
    switch (d) {
        case DType::Float16:
            return "float16";
        case DType::Float32:
            return "float32";
        case DType::Float64:
            return "float64";
        case DType::Int32:
            return "int32";
        case DType::Int64:
            return "int64";
        case DType::UInt8:
            return "uint8";
        case DType::Bool:
            return "bool";
        default:
            return "?";
    }
}

std::uint16_t floatToHalf(float f) {  // round to nearest even, normal range only (enough here)
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const int exponent = int((x >> 23) & 0xff) - 127 + 15;
    std::uint32_t mantissa = x & 0x7fffffu;
    if (exponent <= 0)
        return std::uint16_t(sign);
    std::uint32_t h = (std::uint32_t(exponent) << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
        ++h;
    return std::uint16_t(sign | h);
}

// The data sets the oracle sees, made the same way on every run.
std::vector<DataSet> makeDataSets() {
    std::vector<DataSet> sets;
    {  // float32, values in [-10, 10), noise of several relative and absolute sizes
        Random r(1);
        std::vector<float> a, b;
        for (int i = 0; i < 40 * 250; ++i) {
            const double x = i % 97 == 0 ? 0.0 : 10 * r.symmetric();
            const double rel = r.pick({0.0, 0.0, 1e-7, 1e-6, 5e-6, 2e-5, 1e-4, 1e-3, 5e-3});
            const double abs = r.pick({0.0, 0.0, 0.0, 1e-9, 3e-3, 2e-2});
            a.push_back(float(x));
            b.push_back(float(x * (1 + rel * r.symmetric()) + abs * r.symmetric()));
        }
        sets.push_back(
            {"float32-noise", DType::Float32, DType::Float32, {40, 250}, rawOf(a), rawOf(b)});
    }
    {  // float64, the same kind of noise, finer
        Random r(2);
        std::vector<double> a, b;
        for (int i = 0; i < 20 * 10 * 30; ++i) {
            const double x = 1000 * r.symmetric();
            const double rel = r.pick({0.0, 0.0, 1e-12, 1e-9, 1e-7, 1e-6, 1e-5, 1e-4});
            const double abs = r.pick({0.0, 0.0, 1e-10, 1e-6, 1e-3});
            a.push_back(x);
            b.push_back(x * (1 + rel * r.symmetric()) + abs * r.symmetric());
        }
        sets.push_back(
            {"float64-noise", DType::Float64, DType::Float64, {20, 10, 30}, rawOf(a), rawOf(b)});
    }
    {  // float16
        Random r(3);
        std::vector<std::uint16_t> a, b;
        for (int i = 0; i < 4096; ++i) {
            const double x = 8 * r.symmetric();
            a.push_back(floatToHalf(float(x)));
            b.push_back(
                floatToHalf(float(x * (1 + r.pick({0.0, 0.0, 1e-3, 1e-2}) * r.symmetric()))));
        }
        sets.push_back(
            {"float16-noise", DType::Float16, DType::Float16, {64, 64}, rawOf(a), rawOf(b)});
    }
    {  // int32 with small integer differences
        Random r(4);
        std::vector<std::int32_t> a, b;
        for (int i = 0; i < 16 * 64; ++i) {
            const auto x = std::int32_t(r.next() % 2001) - 1000;
            a.push_back(x);
            b.push_back(x + r.pick({0, 0, 0, 0, 0, 1, -1, 2, -2, 3, -3}));
        }
        sets.push_back({"int32", DType::Int32, DType::Int32, {16, 64}, rawOf(a), rawOf(b)});
    }
    // int64 with tolerances: values within +-2^23. torch 1.13's isclose
    // subtracts integers in float32 when rtol or atol is set (it says
    // 100000003 and 100000000 are within atol 2), so its answers are exact
    // only for integers that float32 holds; larger ones are compared with
    // tolerance 0 only (exact in int64 there), and with tolerances by
    // largeInt64IsExact() against exact arithmetic.
    {
        Random r(5);
        std::vector<std::int64_t> a, b;
        for (int i = 0; i < 2048; ++i) {
            const std::int64_t x = std::int64_t(r.next() % 16000001) - 8000000;
            a.push_back(x);
            b.push_back(x + r.pick({0, 0, 0, 1, -1, 2, -2, 3}));
        }
        sets.push_back({"int64", DType::Int64, DType::Int64, {2048}, rawOf(a), rawOf(b)});
    }
    {  // int64 around 1e12 (exact in double, not in float32)
        Random r(12);
        std::vector<std::int64_t> a, b;
        for (int i = 0; i < 2048; ++i) {
            const std::int64_t x = 1000000000000ll + std::int64_t(r.next() % 200000000000ull);
            a.push_back(x);
            b.push_back(x + r.pick({0, 0, 0, 1, -1, 2, -2, 3}));
        }
        sets.push_back({"int64-1e12", DType::Int64, DType::Int64, {2048}, rawOf(a), rawOf(b)});
    }
    {  // int64 nanosecond timestamps (~1.7e18): differences far below a double's spacing
        Random r(6);
        std::vector<std::int64_t> a, b;
        for (int i = 0; i < 1024; ++i) {
            const std::int64_t x = 1700000000000000000ll + std::int64_t(i) * 1000003;
            a.push_back(x);
            b.push_back(x + r.pick({0, 0, 1, 2, 3, -3, 1000}));
        }
        sets.push_back(
            {"int64-timestamps", DType::Int64, DType::Int64, {32, 32}, rawOf(a), rawOf(b)});
    }
    // NaN and infinities on both and on one side, then ordinary values.
    const double specials[][2] = {
        {kNan, kNan}, {kNan, 1}, {1, kNan},  {kInf, kInf}, {-kInf, -kInf}, {kInf, -kInf},
        {kInf, 1},    {1, kInf}, {-kInf, 1}, {kNan, kInf}, {0, 0},         {-0.0, 0},
        {1, 1.0001},  {2, 2.5},  {0, 1e-3},  {1e-3, 0},    {kNan, -kNan},  {-kInf, kNan}};
    for (const bool wide : {false, true}) {
        Random r(7);
        std::vector<float> a32, b32;
        std::vector<double> a64, b64;
        for (int i = 0; i < 96; ++i) {
            double x, y;
            if (i < int(std::size(specials)) * 2 && i % 2 == 0) {
                x = specials[i / 2][0];
                y = specials[i / 2][1];
            } else {
                x = y = 4 * r.symmetric();
                if (i % 3 == 0)
                    y = x * (1 + 1e-4 * r.symmetric());
            }
            a32.push_back(float(x));
            b32.push_back(float(y));
            a64.push_back(x);
            b64.push_back(y);
        }
        if (wide)
            sets.push_back({"float64-nan-inf",
                            DType::Float64,
                            DType::Float64,
                            {8, 12},
                            rawOf(a64),
                            rawOf(b64)});
        else
            sets.push_back({"float32-nan-inf",
                            DType::Float32,
                            DType::Float32,
                            {8, 12},
                            rawOf(a32),
                            rawOf(b32)});
    }
    {  // float32 against float64
        Random r(8);
        std::vector<float> a;
        std::vector<double> b;
        for (int i = 0; i < 3000; ++i) {
            const float x = float(100 * r.symmetric());
            a.push_back(x);
            b.push_back(double(x) *
                        (1 + r.pick({0.0, 0.0, 0.0, 1e-9, 1e-7, 3e-6, 1e-5}) * r.symmetric()));
        }
        sets.push_back(
            {"float32-vs-float64", DType::Float32, DType::Float64, {3000}, rawOf(a), rawOf(b)});
    }
    {  // int32 against float32
        Random r(9);
        std::vector<std::int32_t> a;
        std::vector<float> b;
        for (int i = 0; i < 1000; ++i) {
            const auto x = std::int32_t(r.next() % 1001) - 500;
            a.push_back(x);
            b.push_back(float(x) + r.pick({0.0f, 0.0f, 0.0f, 0.25f, 0.5f, 1.0f, 2.0f, -0.75f}));
        }
        sets.push_back(
            {"int32-vs-float32", DType::Int32, DType::Float32, {10, 100}, rawOf(a), rawOf(b)});
    }
    {  // int32 against int64
        Random r(10);
        std::vector<std::int32_t> a;
        std::vector<std::int64_t> b;
        for (int i = 0; i < 1000; ++i) {
            const auto x = std::int32_t(r.next() % 100001) - 50000;
            a.push_back(x);
            b.push_back(std::int64_t(x) + r.pick({0, 0, 0, 1, -2}));
        }
        sets.push_back({"int32-vs-int64", DType::Int32, DType::Int64, {1000}, rawOf(a), rawOf(b)});
    }
    {  // zeros in b: the relative difference is infinite there
        Random r(11);
        std::vector<float> a, b;
        for (int i = 0; i < 800; ++i) {
            const int kind = int(r.next() % 4);
            const float x = kind == 0 ? 0.0f : float(r.symmetric());
            a.push_back(x);
            b.push_back(kind == 1 ? 0.0f : kind == 2 ? float(x * (1 + 1e-4 * r.symmetric())) : x);
        }
        sets.push_back(
            {"zeros-in-b", DType::Float32, DType::Float32, {20, 40}, rawOf(a), rawOf(b)});
    }
    return sets;
}

struct OracleCase {
    QString name;
    QString dataSet;
    Tolerance tolerance;
};

std::vector<OracleCase> makeOracleCases() {
    std::vector<OracleCase> cases;
    auto add = [&](const QString& set, double rtol, double atol, bool equalNan = false) {
        const QString name = QString("%1 rtol=%2 atol=%3%4")
                                 .arg(set)
                                 .arg(rtol)
                                 .arg(atol)
                                 .arg(equalNan ? " equal_nan" : "");
        cases.push_back({name, set, Tolerance{rtol, atol, equalNan}});
    };
    for (auto [rtol, atol] :
         {std::pair{0.0, 0.0}, {1e-5, 1e-8}, {1e-3, 0.0}, {0.0, 1e-2}, {1.3e-6, 1e-5}})
        add("float32-noise", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {1e-7, 0.0}, {1e-5, 1e-8}, {0.0, 1e-3}})
        add("float64-noise", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {1e-2, 0.0}})
        add("float16-noise", rtol, atol);
    for (auto [rtol, atol] :
         {std::pair{0.0, 0.0}, {0.0, 1.0}, {0.0, 2.0}, {0.0, 2.5}, {1.5e-3, 0.0}})
        add("int32", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {0.0, 2.0}, {1.5e-6, 0.0}, {1e-6, 1.0}})
        add("int64", rtol, atol);
    add("int64-1e12", 0, 0);
    add("int64-timestamps", 0, 0);
    for (const char* set : {"float32-nan-inf", "float64-nan-inf"})
        for (bool equalNan : {false, true})
            for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {1e-3, 1e-3}})
                add(set, rtol, atol, equalNan);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {1e-6, 0.0}, {1e-5, 1e-8}})
        add("float32-vs-float64", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {0.0, 0.3}, {0.0, 1.0}, {1e-3, 0.5}})
        add("int32-vs-float32", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {0.0, 1.0}})
        add("int32-vs-int64", rtol, atol);
    for (auto [rtol, atol] : {std::pair{0.0, 0.0}, {0.0, 1e-3}, {1e-3, 0.0}})
        add("zeros-in-b", rtol, atol);
    return cases;
}

// A number of assert_close.py's output: a JSON number, or "inf" / "-inf" / "nan".
double jsonNumber(const QJsonValue& v) {
    if (v.isString()) {
        const QString s = v.toString();
        return s == "nan" ? kNan : s == "-inf" ? -kInf : s == "inf" ? kInf : kNan;
    }
    return v.toDouble(kNan);
}

// One tensor leaf "x" in a new tensordict.
TensorDict oneLeaf(DType dtype, const std::vector<std::int64_t>& shape, const QByteArray& bytes) {
    TensorDict td = TensorDict::create();
    td.mutableRoot().addBytes("x", dtype, shape, ownedBytes(bytes));
    return td;
}

bool hasNan(const Node& leaf) {
    if (!leaf.isTensor() || leaf.leaf().numel == 0)
        return false;
    const DTypeCategory c = dtypeInfo(leaf.leaf().dtype).category;
    if (c != DTypeCategory::Float && c != DTypeCategory::Complex)
        return false;
    const LeafBytes bytes = leaf.bytes();
    for (std::int64_t i = 0; i < leaf.leaf().numel; ++i) {
        const ComplexValue v =
            elementAsComplex(bytes.data.get() + i * itemSize(leaf.leaf().dtype), leaf.leaf().dtype);
        if (std::isnan(v.re) || std::isnan(v.im))
            return true;
    }
    return false;
}

void forEachNode(const Node& node, const std::function<void(const Node&)>& f) {
    f(node);
    for (const auto& child : node.children())
        forEachNode(*child, f);
}

}  // namespace

class CompareTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { testsupport::verifyArchivesWithLibzip(scratch_.path()); }

    void initTestCase() { QVERIFY(scratch_.isValid()); }

    // ---------------------------------------------------------------------
    // Building blocks

    void names() {
        QCOMPARE(differenceName(Difference::Class), std::string_view("class"));
        QCOMPARE(differenceName(Difference::NonTensor), std::string_view("non_tensor"));
        QCOMPARE(keyStatusName(KeyStatus::OnlyInB), std::string_view("only_in_b"));
        QCOMPARE(keyStatusName(KeyStatus::Same), std::string_view("same"));
        const unsigned flags = Difference::Values | Difference::DType;
        QCOMPARE(differencesOf(flags),
                 (std::vector<Difference>{Difference::DType, Difference::Values}));
        QVERIFY(hasDifference(flags, Difference::DType));
        QVERIFY(!hasDifference(flags, Difference::Shape));
        QVERIFY(differencesOf(0).empty());
    }

    void unflatten() {
        using V = std::vector<std::int64_t>;
        QCOMPARE(unflattenIndex(17, {4, 2, 3}), (V{2, 1, 2}));
        QCOMPARE(unflattenIndex(0, {4, 2, 3}), (V{0, 0, 0}));
        QCOMPARE(unflattenIndex(23, {4, 2, 3}), (V{3, 1, 2}));
        QCOMPARE(unflattenIndex(5, {6}), (V{5}));
        QCOMPARE(unflattenIndex(7, {1, 1, 8}), (V{0, 0, 7}));
        QCOMPARE(unflattenIndex(1234567, {1000, 1000, 10}), (V{123, 456, 7}));
        QCOMPARE(unflattenIndex(0, {}), V{});
    }

    void elementsCloseRules() {
        auto close = [](auto a, DType at, auto b, DType bt, double rtol, double atol,
                        bool equalNan = false) {
            return elementsClose(reinterpret_cast<const std::byte*>(&a), at,
                                 reinterpret_cast<const std::byte*>(&b), bt,
                                 Tolerance{rtol, atol, equalNan});
        };
        const DType f32 = DType::Float32, f64 = DType::Float64, i32 = DType::Int32,
                    i64 = DType::Int64;
        QVERIFY(close(1.0f, f32, 1.0f, f32, 0, 0));
        QVERIFY(!close(1.0f, f32, 1.5f, f32, 0, 0));
        // |a - b| <= atol + rtol * |b|, bounds included
        QVERIFY(close(1.5f, f32, 1.0f, f32, 0, 0.5));
        QVERIFY(!close(1.5f, f32, 1.0f, f32, 0, 0.49));
        QVERIFY(close(1.5f, f32, 1.0f, f32, 0.5, 0));
        QVERIFY(close(1.5f, f32, 1.0f, f32, 0.25, 0.25));
        QVERIFY(!close(1.5f, f32, 1.0f, f32, 0.2, 0.2));
        // rtol scales |b| (expected), not |a|: not symmetric
        QVERIFY(!close(2.0, f64, 1.0, f64, 0.6, 0));
        QVERIFY(close(1.0, f64, 2.0, f64, 0.6, 0));
        QVERIFY(close(-2.0, f64, -1.0, f64, 1.0, 0));
        // NaN equals NaN only with equalNan; never equals a number
        QVERIFY(!close(kNan, f64, kNan, f64, 0, 0));
        QVERIFY(!close(kNan, f64, kNan, f64, 1, 1));
        QVERIFY(close(kNan, f64, kNan, f64, 0, 0, true));
        QVERIFY(close(float(kNan), f32, -float(kNan), f32, 0, 0, true));
        QVERIFY(!close(kNan, f64, 1.0, f64, 0, 0, true));
        QVERIFY(!close(1.0, f64, kNan, f64, 1e300, 1e300, true));
        QVERIFY(!close(float(kNan), f32, kNan, f64, 0, 0));
        QVERIFY(close(float(kNan), f32, kNan, f64, 0, 0, true));
        // infinities: equal to themselves only, whatever the tolerance
        QVERIFY(close(kInf, f64, kInf, f64, 0, 0));
        QVERIFY(close(-kInf, f64, -kInf, f64, 0, 0));
        QVERIFY(!close(kInf, f64, -kInf, f64, 0, 1e308));
        QVERIFY(!close(kInf, f64, 1.0, f64, 0, kInf));
        QVERIFY(!close(1.0, f64, kInf, f64, kInf, kInf));
        QVERIFY(close(float(kInf), f32, kInf, f64, 0, 0));
        QVERIFY(close(-0.0, f64, 0.0, f64, 0, 0));
        // mixed dtypes: promoted
        QVERIFY(close(std::int32_t(3), i32, 3.0f, f32, 0, 0));
        QVERIFY(!close(std::int32_t(3), i32, 3.5f, f32, 0, 0));
        QVERIFY(close(std::int32_t(3), i32, 3.5f, f32, 0, 0.5));
        QVERIFY(close(std::int32_t(-7), i32, std::int64_t(-7), i64, 0, 0));
        QVERIFY(!close(0.1f, f32, 0.1, f64, 0, 0));  // float32(0.1) != 0.1
        QVERIFY(close(0.1f, f32, 0.1, f64, 1e-7, 0));
        QVERIFY(close(std::uint8_t(1), DType::Bool, std::uint8_t(1), DType::UInt8, 0, 0));
        QVERIFY(!close(std::uint8_t(200), DType::UInt8, std::int8_t(-56), DType::Int8, 0, 0));
        QVERIFY(close(std::uint16_t(0x3C00), DType::Float16, 1.0f, f32, 0, 0));  // 1.0
        QVERIFY(close(std::uint16_t(0x3F80), DType::BFloat16, 1.0, f64, 0, 0));
        QVERIFY(!close(std::uint16_t(0x3C01), DType::Float16, 1.0f, f32, 0, 0));
        // complex: |a - b| of the complex numbers
        const float c1[2] = {1, 2}, c2[2] = {1, 2.1f};
        QVERIFY(close(c1, DType::Complex64, c1, DType::Complex64, 0, 0));
        const auto closeC = [](const float* x, const float* y, double atol) {
            return elementsClose(reinterpret_cast<const std::byte*>(x), DType::Complex64,
                                 reinterpret_cast<const std::byte*>(y), DType::Complex64,
                                 Tolerance{0, atol, false});
        };
        QVERIFY(closeC(c1, c2, 0.2));
        QVERIFY(!closeC(c1, c2, 0.05));
        // int64 compares exactly (|a - b| <= atol + rtol * |b| in exact
        // arithmetic): no rounding through double. (torch 1.13's isclose
        // rounds integers through float32 once a tolerance is set and calls
        // these close; see largeInt64IsExact.)
        const std::int64_t big = std::int64_t(1) << 53;
        QVERIFY(!close(big + 1, i64, big, i64, 0, 0));
        QVERIFY(close(big + 1, i64, big, i64, 0, 1));
        const std::int64_t huge = std::int64_t(1) << 62;
        QVERIFY2(!close(huge + 3, i64, huge, i64, 0, 2),
                 "int64 2^62+3 vs 2^62 with atol 2: |a - b| = 3 > 2");
        QVERIFY(close(huge + 3, i64, huge, i64, 0, 3));
    }

    // ---------------------------------------------------------------------
    // Fixtures against their copies

    void fixturesHaveNoNan() {
        // So the fixtures compare equal with the default tolerance
        // (equalNan false); NaN itself is tested in nanNeedsEqualNan().
        for (const QString& name : testsupport::fixtureNames()) {
            const TensorDict td = testsupport::loadFixture(name);
            forEachNode(td.root(), [&](const Node& n) {
                QVERIFY2(!hasNan(n), qPrintable(name + ": " + keyText(n.keyPath())));
            });
        }
    }

    void fixtureEqualsItsCopies_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("target");  // dir, or an archive's compression
        for (const QString& name : testsupport::fixtureNames())
            for (const char* target : {"dir", "stored", "deflate", "bzip2", "lzma"})
                QTest::newRow(qPrintable(name + "/" + target)) << name << QString(target);
    }
    void fixtureEqualsItsCopies() {
        QFETCH(QString, fixture);
        QFETCH(QString, target);
        QString source = testsupport::fixturePath(fixture);
        if (fixture.startsWith("archive_"))
            source += ".tdz";
        LoadOptions loadOptions;
        loadOptions.robustKey = fixture != "legacy_keys";  // as it was written
        const TensorDict original = load(source.toStdString(), loadOptions);

        SaveOptions options;
        options.copyExisting = true;
        options.robustKey = loadOptions.robustKey;
        QString prefix = scratch_.path() + "/copies/" + fixture + "-" + target;
        if (target != "dir") {
            prefix += ".tdz";
            options.compression = *zipMethodFromName(target.toStdString());
        }
        QDir().mkpath(scratch_.path() + "/copies");
        try {
            save(original, prefix.toStdString(), options);
        } catch (const Error& e) {
            QFAIL(e.what());
        }
        // Loaded afresh: nothing mapped or inflated yet (compressed entries stream).
        const TensorDict copy = load(prefix.toStdString(), loadOptions);
        for (bool swap : {false, true}) {
            for (int threads : {1, 2}) {
                const TensorDict& a = swap ? copy : original;
                const TensorDict& b = swap ? original : copy;
                CompareOptions o;
                o.numThreads = threads;
                const CompareResult r = compare(a, b, o);
                const QString what = describe(r);
                QVERIFY2(r.equal(), qPrintable(what));
                QVERIFY(!r.cancelled);
                QVERIFY(r.changed().empty() && r.onlyInA().empty() && r.onlyInB().empty() &&
                        r.errors().empty());
                // One entry per node, in tree order.
                std::vector<KeyPath> keys;
                for (const KeyComparison& k : r.keys)
                    keys.push_back(k.key);
                QVERIFY2(keys == preorder(a.root()), qPrintable(what));
                for (const KeyComparison& k : r.keys) {
                    QVERIFY2(k.status == KeyStatus::Same && k.differences == 0 && !k.pending &&
                                 k.a && k.b && k.error.empty(),
                             qPrintable(describe(k)));
                    QCOMPARE(k.a, a.root().find(k.key));
                    QCOMPARE(k.b, b.root().find(k.key));
                    // Identical bytes: compared, and the same.
                    if (k.a->isTensor() && k.a->leaf().numel > 0) {
                        QVERIFY2(k.values.has_value(), qPrintable(describe(k)));
                        QCOMPARE(k.values->differing, std::uint64_t(0));
                        QCOMPARE(k.values->firstIndex, std::int64_t(-1));
                        QCOMPARE(k.values->maxAbsDiff, 0.0);
                        QVERIFY(k.firstIndex.empty());
                        QCOMPARE(compareValues(*k.a, *k.b, {}).differing, std::uint64_t(0));
                    }
                }
            }
        }
    }

    void pythonArchiveEqualsDirectory() {
        // archive_simple.tdz is `simple` saved by Python as an archive.
        const TensorDict dir = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict tdz = load(testsupport::fixturePath("archive_simple.tdz").toStdString());
        const CompareResult r = compare(dir, tdz);
        QVERIFY2(r.equal(), qPrintable(describe(r)));
        QCOMPARE(r.keys.size(), std::size_t(4));  // [], a, b, b/c
    }

    void nanNeedsEqualNan() {
        // A leaf holding NaN is not equal to itself unless equalNan, as in
        // assert_close; the same goes for its copies.
        TensorDict td = TensorDict::create();
        const std::vector<float> f = {1, float(kNan), 3, float(kNan), 5, 6};
        const std::vector<double> d = {kNan, 2, float(kInf)};
        const std::vector<float> c = {1, 2, 3, float(kNan)};  // complex64 [2]: NaN imaginary part
        td.mutableRoot().addBytes("f", DType::Float32, {2, 3}, ownedBytes(f));
        td.mutableRoot().addBytes("d", DType::Float64, {3}, ownedBytes(d));
        td.mutableRoot().addBytes("c", DType::Complex64, {2}, ownedBytes(c));
        td.mutableRoot().addBytes("ok", DType::Float32, {2}, ownedBytes(std::vector<float>{1, 2}));
        const QString dir = scratch_.path() + "/nan", tdz = scratch_.path() + "/nan.tdz";
        save(td, dir.toStdString());
        SaveOptions deflate;
        deflate.copyExisting = true;
        deflate.compression = kZipDeflate;
        save(load(dir.toStdString()), tdz.toStdString(), deflate);
        const TensorDict a = load(dir.toStdString()), b = load(tdz.toStdString());

        for (const TensorDict* other : {&a, &b}) {  // itself, and its deflated copy
            CompareResult r = compare(a, *other);
            QVERIFY2(!r.equal(), qPrintable(describe(r)));
            QCOMPARE(r.changed().size(), std::size_t(3));
            const KeyComparison* k = entryAt(r, {"f"});
            QVERIFY(k && k->status == KeyStatus::Changed &&
                    k->differences == unsigned(Difference::Values));
            QCOMPARE(k->values->differing, std::uint64_t(2));
            QCOMPARE(k->values->firstIndex, std::int64_t(1));
            QCOMPARE(k->firstIndex, (std::vector<std::int64_t>{0, 1}));
            QCOMPARE(k->values->maxAbsDiff, 0.0);  // NaN counts, but not in the maxima
            QCOMPARE(k->values->maxRelDiff, 0.0);
            QCOMPARE(k->values->nanDiffering, std::uint64_t(2));  // said so, for the reader
            k = entryAt(r, {"d"});
            QCOMPARE(k->values->differing, std::uint64_t(1));
            QCOMPARE(k->values->nanDiffering, std::uint64_t(1));
            QCOMPARE(k->values->firstIndex, std::int64_t(0));
            k = entryAt(r, {"c"});
            QCOMPARE(k->values->differing, std::uint64_t(1));
            QCOMPARE(k->values->firstIndex, std::int64_t(1));
            QCOMPARE(entryAt(r, {"ok"})->status, KeyStatus::Same);
            QCOMPARE(compareValues(*a.root().child("f"), *other->root().child("f"), {}).differing,
                     std::uint64_t(2));

            CompareOptions o;
            o.tolerance.equalNan = true;
            r = compare(a, *other, o);
            QVERIFY2(r.equal(), qPrintable(describe(r)));
            QCOMPARE(entryAt(r, {"f"})->values->differing, std::uint64_t(0));
        }
    }

    // ---------------------------------------------------------------------
    // Copies with one edit

    void changedElement() {
        // batch_4x2/obs is float32 [4, 2, 3] holding 0..23; element [2, 1, 2] (17) -> 17.25.
        const QString copy = copyFixture("batch_4x2", "changed-element");
        QVERIFY2(patchFile(copy + "/obs.memmap", 17 * 4, rawOf(17.25f)).isEmpty(), "patch");
        const TensorDict a = load(testsupport::fixturePath("batch_4x2").toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        e.key = {"obs"};
        e.differences = unsigned(Difference::Values);
        e.hasValues = true;
        e.values = {1, 0.25, 0.25 / 17.25, 17};
        e.firstIndex = {2, 1, 2};
        for (int threads : {1, 2}) {
            CompareOptions o;
            o.numThreads = threads;
            QString problem = exactlyOneDifference(compare(a, b, o), e);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            // The other way round, the relative difference is over 17.
            Expected reversed = e;
            reversed.values.maxRelDiff = 0.25 / 17;
            problem = exactlyOneDifference(compare(b, a, o), reversed);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // Against the fixture's deflated archive: the compressed entry streams.
        const QString tdz = scratch_.path() + "/batch_4x2-deflate.tdz";
        SaveOptions deflate;
        deflate.copyExisting = true;
        deflate.compression = kZipDeflate;
        save(a, tdz.toStdString(), deflate);
        const TensorDict z = load(tdz.toStdString());
        QCOMPARE(z.root().child("obs")->leaf().storage.kind, StorageKind::CompressedEntry);
        const QString problem = exactlyOneDifference(compare(z, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // A tolerance that covers it: equal.
        CompareOptions loose;
        loose.tolerance.atol = 0.25;
        QVERIFY(compare(a, b, loose).equal());
        loose.tolerance = {0.25 / 17.25 + 1e-12, 0, false};
        QVERIFY(compare(a, b, loose).equal());
        loose.tolerance = {0.25 / 17.25 - 1e-9, 0, false};
        QVERIFY(!compare(a, b, loose).equal());
    }

    void changedInt64Element() {
        // dtypes/int64 is [2, 3]; element [1, 1] (4398046511099) + 3.
        const QString copy = copyFixture("dtypes", "changed-int64");
        const std::int64_t before = 4398046511099ll;
        QCOMPARE(readAll(copy + "/int64.memmap").mid(4 * 8, 8), rawOf(before));
        QVERIFY(patchFile(copy + "/int64.memmap", 4 * 8, rawOf(before + 3)).isEmpty());
        Expected e;
        e.key = {"int64"};
        e.differences = unsigned(Difference::Values);
        e.hasValues = true;
        e.values = {1, 3, 3.0 / double(before + 3), 4};
        e.firstIndex = {1, 1};
        const QString problem =
            exactlyOneDifference(compare(load(testsupport::fixturePath("dtypes").toStdString()),
                                         load(copy.toStdString())),
                                 e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void droppedKey() {
        // simple without its leaf "a" (file and meta.json entry).
        const QString copy = copyFixture("simple", "dropped-key");
        QVERIFY(QFile::remove(copy + "/a.memmap"));
        QString error = replaceInFile(
            copy + "/meta.json",
            R"("a": {"device": "cpu", "shape": [3], "dtype": "torch.float32", "is_nested": false}, )",
            "");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        e.key = {"a"};
        e.status = KeyStatus::OnlyInA;
        QString problem = exactlyOneDifference(compare(a, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(compare(a, b).onlyInA().front()->a, a.root().child("a"));
        e.status = KeyStatus::OnlyInB;
        problem = exactlyOneDifference(compare(b, a), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // A's order, then B's extra keys.
        const CompareResult r = compare(b, a);
        QCOMPARE(r.keys.back().key, KeyPath{"a"});
    }

    // Keys that print alike (a checkpoint's 1 and "1") pair in order: a file
    // compared with itself is the same, and a change to the second is that
    // one change. (They were both paired with the first: "changed".)
    void keysThatPrintAlikePairInOrder() {
        QString error;
        QVERIFY2(testsupport::runPython({"-c",
                                         "import sys, torch\n"
                                         "d = sys.argv[1]\n"
                                         "torch.save({1: torch.ones(2), '1': torch.zeros(2)},"
                                         " d + '/alike_a.pt')\n"
                                         "torch.save({1: torch.ones(2), '1': torch.full((2,), 5.)},"
                                         " d + '/alike_b.pt')\n",
                                         scratch_.path()},
                                        nullptr, &error),
                 qPrintable(error));
        const TensorDict a = load((scratch_.path() + "/alike_a.pt").toStdString());
        const TensorDict b = load((scratch_.path() + "/alike_b.pt").toStdString());
        QCOMPARE(a.root().children().size(), std::size_t(2));
        QVERIFY(compare(a, a).equal());
        const CompareResult r = compare(a, b);
        QCOMPARE(r.keys.size(), std::size_t(3));  // [], 1, "1"
        QCOMPARE(r.keys[1].status, KeyStatus::Same);
        QCOMPARE(r.keys[2].status, KeyStatus::Changed);
        QCOMPARE(r.keys[2].a, a.root().children()[1]);
        QCOMPARE(r.keys[2].b, b.root().children()[1]);
    }

    void droppedSubtree() {
        // nested3 without "l1" and everything under it: one key, no descendants.
        const QString copy = copyFixture("nested3", "dropped-subtree");
        QVERIFY(QDir(copy + "/l1").removeRecursively());
        QString error = replaceInFile(copy + "/meta.json", R"("l1": {"type": "TensorDict"}, )", "");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("nested3").toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        e.key = {"l1"};
        e.status = KeyStatus::OnlyInA;
        const CompareResult r = compare(a, b);
        const QString problem = exactlyOneDifference(r, e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(r.keys.size(), std::size_t(3));  // [], x, l1
    }

    void addedKey() {
        // simple with a new int64 [3] leaf "z".
        const QString copy = copyFixture("simple", "added-key");
        testsupport::writeFile(copy + "/z.memmap", rawOf(std::vector<std::int64_t>{7, 8, 9}));
        QString error = replaceInFile(
            copy + "/meta.json", R"("b": {"type": "TensorDict"}, )",
            R"("b": {"type": "TensorDict"}, "z": {"device": "cpu", "shape": [3], "dtype": "torch.int64", "is_nested": false}, )");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict b = load(copy.toStdString());
        QVERIFY(b.root().child("z"));
        Expected e;
        e.key = {"z"};
        e.status = KeyStatus::OnlyInB;
        const CompareResult r = compare(a, b);
        const QString problem = exactlyOneDifference(r, e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(r.keys.back().key, KeyPath{"z"});  // after all of A's keys
        QCOMPARE(r.onlyInB().front()->b, b.root().child("z"));
    }

    void changedDType() {
        // simple/a: float32 zeros -> float64 zeros. Values compare after
        // promotion and are equal; only the dtype differs.
        const QString copy = copyFixture("simple", "changed-dtype");
        testsupport::writeFile(copy + "/a.memmap", QByteArray(3 * 8, '\0'));
        QString error =
            replaceInFile(copy + "/meta.json", R"("shape": [3], "dtype": "torch.float32")",
                          R"("shape": [3], "dtype": "torch.float64")");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict b = load(copy.toStdString());
        QCOMPARE(b.root().child("a")->leaf().dtype, DType::Float64);
        Expected e;
        e.key = {"a"};
        e.differences = unsigned(Difference::DType);
        e.hasValues = true;
        e.values = {0, 0, 0, -1};
        const QString problem = exactlyOneDifference(compare(a, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void changedShape() {
        // simple/b/c: [3, 2] -> [3, 2, 1], same bytes. Values are not compared.
        const QString copy = copyFixture("simple", "changed-shape");
        QString error =
            replaceInFile(copy + "/b/meta.json", R"("shape": [3, 2], )", R"("shape": [3, 2, 1], )");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        e.key = {"b", "c"};
        e.differences = unsigned(Difference::Shape);
        const QString problem = exactlyOneDifference(compare(a, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void changedNonTensor() {
        const QString copy = copyFixture("nontensor_string", "changed-nontensor");
        QString error =
            replaceInFile(copy + "/s/meta.json", R"("hello world")", R"("hello there")");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const TensorDict a = load(testsupport::fixturePath("nontensor_string").toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        e.key = {"s"};
        e.differences = unsigned(Difference::NonTensor);
        const QString problem = exactlyOneDifference(compare(a, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void changedTensorclassClass_data() {
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("metaFile");  // the tensorclass's meta.json
        QTest::addColumn<QStringList>("key");
        QTest::newRow("root") << "tensorclass"
                              << "meta.json" << QStringList{};
        QTest::newRow("nested") << "tensorclass_nested"
                                << "tc/meta.json" << QStringList{"tc"};
    }
    void changedTensorclassClass() {
        QFETCH(QString, fixture);
        QFETCH(QString, metaFile);
        QFETCH(QStringList, key);
        const QString copy = copyFixture(fixture, "changed-class-" + fixture);
        QString error = replaceInFile(copy + "/" + metaFile, "fixture_classes.MyTC'>",
                                      "fixture_classes.OtherTC'>");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        if (!key.isEmpty()) {  // the parent names the class too
            error =
                replaceInFile(copy + "/meta.json", R"({"type": "MyTC"})", R"({"type": "OtherTC"})");
            QVERIFY2(error.isEmpty(), qPrintable(error));
        }
        const TensorDict a = load(testsupport::fixturePath(fixture).toStdString());
        const TensorDict b = load(copy.toStdString());
        Expected e;
        for (const QString& k : key)
            e.key.push_back(k.toStdString());
        QCOMPARE(b.root().find(e.key)->kind(), NodeKind::TensorClass);
        QCOMPARE(b.root().find(e.key)->className(), std::string("fixture_classes.OtherTC"));
        e.differences = unsigned(Difference::Class);
        const QString problem = exactlyOneDifference(compare(a, b), e);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    // ---------------------------------------------------------------------
    // Values against torch.testing.assert_close

    void matchesAssertClose_data() {
        QTest::addColumn<QString>("name");
        for (const OracleCase& c : makeOracleCases())
            QTest::newRow(qPrintable(c.name)) << c.name;
    }
    void matchesAssertClose() {
        QFETCH(QString, name);
        QString error;
        QVERIFY2(prepareOracle(&error), qPrintable(error));
        const OracleCase& c = oracleCases_.at(name);
        const DataSet& set = dataSets_.at(c.dataSet);
        const QJsonObject py = oracle_[name].toObject();
        QVERIFY2(!py.isEmpty(), qPrintable("no oracle result for " + name));
        const std::uint64_t mismatched = std::uint64_t(py["mismatched"].toInteger(-1));
        QCOMPARE(py["numel"].toInteger(), qint64(set.a.size() / qsizetype(itemSize(set.aType))));
        if (py.contains("message_mismatched"))
            QCOMPARE(std::uint64_t(py["message_mismatched"].toInteger()), mismatched);
        const double maxAbs = jsonNumber(py["max_abs"]), maxRel = jsonNumber(py["max_rel"]);
        const std::int64_t first = py["first_flat_index"].toInteger(-2);
        std::vector<std::int64_t> firstIndex;
        for (const QJsonValue& v : py["first_index"].toArray())
            firstIndex.push_back(v.toInteger());
        const QString expected = QString(
                                     "assert_close: %1 mismatched, max abs %2, max rel %3, "
                                     "first %4")
                                     .arg(mismatched)
                                     .arg(maxAbs, 0, 'g', 17)
                                     .arg(maxRel, 0, 'g', 17)
                                     .arg(first);

        // Element by element.
        std::uint64_t notClose = 0;
        const std::size_t n = std::size_t(py["numel"].toInteger());
        for (std::size_t i = 0; i < n; ++i)
            notClose += !elementsClose(
                reinterpret_cast<const std::byte*>(set.a.constData()) + i * itemSize(set.aType),
                set.aType,
                reinterpret_cast<const std::byte*>(set.b.constData()) + i * itemSize(set.bType),
                set.bType, c.tolerance);
        QVERIFY2(
            notClose == mismatched,
            qPrintable(QString("elementsClose: %1 not close; %2").arg(notClose).arg(expected)));

        // Whole leaves: mapped files, and B's deflated archive (streamed).
        const TensorDict a = load(setPath(set, "a").toStdString());
        for (const char* side : {"b", "b.tdz"}) {
            const TensorDict b = load(setPath(set, side).toStdString());
            const Node& x = *a.root().child("x");
            const Node& y = *b.root().child("x");
            const ValueDifference v = compareValues(x, y, c.tolerance);
            const QString got = QString("%1: %2 differing, max abs %3, max rel %4, first %5")
                                    .arg(side)
                                    .arg(v.differing)
                                    .arg(v.maxAbsDiff, 0, 'g', 17)
                                    .arg(v.maxRelDiff, 0, 'g', 17)
                                    .arg(v.firstIndex);
            const QString both = got + "\n" + expected;
            QVERIFY2(v.differing == mismatched, qPrintable(both));
            QVERIFY2(v.firstIndex == first, qPrintable(both));
            QVERIFY2(sameDouble(v.maxAbsDiff, maxAbs), qPrintable(both));
            QVERIFY2(sameDouble(v.maxRelDiff, maxRel), qPrintable(both));

            for (int threads : {1, 2}) {
                CompareOptions o;
                o.tolerance = c.tolerance;
                o.numThreads = threads;
                const CompareResult r = compare(a, b, o);
                const KeyComparison* k = entryAt(r, {"x"});
                QVERIFY(k && k->values && !k->pending);
                QVERIFY2(k->values->differing == v.differing &&
                             k->values->firstIndex == v.firstIndex &&
                             sameDouble(k->values->maxAbsDiff, v.maxAbsDiff, 0) &&
                             sameDouble(k->values->maxRelDiff, v.maxRelDiff, 0),
                         qPrintable(describe(*k) + "\n" + both));
                QCOMPARE(k->firstIndex, firstIndex);
                const bool sameType = set.aType == set.bType;
                QCOMPARE(hasDifference(k->differences, Difference::Values), mismatched > 0);
                QCOMPARE(hasDifference(k->differences, Difference::DType), !sameType);
                QCOMPARE(r.equal(), py["equal"].toBool() && sameType);
                QCOMPARE(k->status, r.equal() ? KeyStatus::Same : KeyStatus::Changed);
            }
        }
    }

    void stepThroughDifferences() {
        // compareValues(from, firstOnly) walks the differences one by one.
        std::vector<float> av(100), bv(100);
        for (int i = 0; i < 100; ++i)
            av[i] = bv[i] = float(i);
        for (int i : {3, 42, 99})
            bv[i] += 0.5f;
        const TensorDict ta = oneLeaf(DType::Float32, {10, 10}, rawOf(av));
        const TensorDict tb = oneLeaf(DType::Float32, {10, 10}, rawOf(bv));
        const QString dir = scratch_.path() + "/step", tdz = scratch_.path() + "/step.tdz";
        save(tb, dir.toStdString());
        SaveOptions deflate;
        deflate.compression = kZipDeflate;
        save(tb, tdz.toStdString(), deflate);
        const TensorDict fromDir = load(dir.toStdString()), fromTdz = load(tdz.toStdString());
        for (const TensorDict* b : {&tb, &fromDir, &fromTdz}) {
            const Node& x = *ta.root().child("x");
            const Node& y = *b->root().child("x");
            std::vector<std::int64_t> seen;
            for (std::int64_t from = 0;;) {
                const ValueDifference v = compareValues(x, y, {}, from, true);
                if (v.firstIndex < 0) {
                    QCOMPARE(v.differing, std::uint64_t(0));
                    break;
                }
                QCOMPARE(v.differing, std::uint64_t(1));
                QCOMPARE(v.maxAbsDiff, 0.5);
                seen.push_back(v.firstIndex);
                from = v.firstIndex + 1;
                QVERIFY(seen.size() <= 3);
            }
            QCOMPARE(seen, (std::vector<std::int64_t>{3, 42, 99}));
            const ValueDifference rest = compareValues(x, y, {}, 43);
            QCOMPARE(rest.differing, std::uint64_t(1));
            QCOMPARE(rest.firstIndex, std::int64_t(99));
            QCOMPARE(compareValues(x, y, {}, 100).differing, std::uint64_t(0));
            QCOMPARE(compareValues(x, y, {}).differing, std::uint64_t(3));
        }
    }

    void largeInt64IsExact_data() {
        QTest::addColumn<double>("atol");
        for (double atol : {0.0, 2.0, 999.0, 1000.0})
            QTest::newRow(qPrintable(QString("atol=%1").arg(atol))) << atol;
    }
    void largeInt64IsExact() {
        // Nanosecond timestamps (~1.7e18, where doubles are 256 apart) that
        // differ by a few units: counted and measured in exact arithmetic.
        QFETCH(double, atol);
        std::vector<std::int64_t> av, bv;
        Random r(13);
        for (int i = 0; i < 4096; ++i) {
            const std::int64_t x = 1700000000000000000ll + std::int64_t(i) * 1000003;
            av.push_back(x);
            bv.push_back(x + r.pick({0, 0, 1, 2, 3, -3, 1000}));
        }
        std::uint64_t differing = 0;
        std::int64_t first = -1, maxAbs = 0;
        for (std::size_t i = 0; i < av.size(); ++i) {
            const std::int64_t d = av[i] > bv[i] ? av[i] - bv[i] : bv[i] - av[i];
            if (double(d) > atol) {
                ++differing;
                maxAbs = std::max(maxAbs, d);
                if (first < 0)
                    first = std::int64_t(i);
            }
        }
        QVERIFY(differing > 0 || atol >= 1000);
        const TensorDict a = oneLeaf(DType::Int64, {64, 64}, rawOf(av));
        const TensorDict b = oneLeaf(DType::Int64, {64, 64}, rawOf(bv));
        const ValueDifference v =
            compareValues(*a.root().child("x"), *b.root().child("x"), Tolerance{0, atol, false});
        QVERIFY2(
            v.differing == differing && v.firstIndex == first && v.maxAbsDiff == double(maxAbs),
            qPrintable(QString("got %1 differing, max abs %2, first %3; exact: %4, %5, %6")
                           .arg(v.differing)
                           .arg(v.maxAbsDiff, 0, 'g', 17)
                           .arg(v.firstIndex)
                           .arg(differing)
                           .arg(maxAbs)
                           .arg(first)));
    }

    // ---------------------------------------------------------------------
    // Options: keys, onKey, progress, cancel

    void restrictToKeys() {
        // simple with a changed and b equal: comparing b alone finds them equal.
        const QString copy = copyFixture("simple", "keys");
        QVERIFY(patchFile(copy + "/a.memmap", 4, rawOf(1.0f)).isEmpty());
        testsupport::writeFile(copy + "/z.memmap", rawOf(std::vector<std::int64_t>{1, 2, 3}));
        QVERIFY(
            replaceInFile(
                copy + "/meta.json", R"("b": {"type": "TensorDict"}, )",
                R"("b": {"type": "TensorDict"}, "z": {"device": "cpu", "shape": [3], "dtype": "torch.int64", "is_nested": false}, )")
                .isEmpty());
        const TensorDict a = load(testsupport::fixturePath("simple").toStdString());
        const TensorDict b = load(copy.toStdString());
        QVERIFY(!compare(a, b).equal());

        auto keysOf = [](const CompareResult& r) {
            std::vector<KeyPath> out;
            for (const KeyComparison& k : r.keys)
                out.push_back(k.key);
            return out;
        };
        CompareOptions o;
        o.keys = {{"b"}};
        CompareResult r = compare(a, b, o);
        QVERIFY2(r.equal(), qPrintable(describe(r)));
        QCOMPARE(keysOf(r), (std::vector<KeyPath>{{"b"}, {"b", "c"}}));
        QCOMPARE(r.keys[1].a, a.root().find({"b", "c"}));

        o.keys = {{"b", "c"}, {"a"}};
        r = compare(a, b, o);
        QCOMPARE(keysOf(r), (std::vector<KeyPath>{{"b", "c"}, {"a"}}));
        QCOMPARE(r.keys[0].status, KeyStatus::Same);
        QCOMPARE(r.keys[1].status, KeyStatus::Changed);
        QCOMPARE(r.keys[1].values->differing, std::uint64_t(1));
        QCOMPARE(r.keys[1].firstIndex, std::vector<std::int64_t>{1});

        o.keys = {{"z"}};  // only in B
        r = compare(a, b, o);
        QCOMPARE(keysOf(r), (std::vector<KeyPath>{{"z"}}));
        QCOMPARE(r.keys[0].status, KeyStatus::OnlyInB);

        o.keys = {{"nope"}};
        const QString message = errorOf([&] { compare(a, b, o); });
        QVERIFY2(message.contains("nope"), qPrintable(message));
        o.keys = {{"b", "nope"}};
        QVERIFY(!errorOf([&] { compare(a, b, o); }).isEmpty());
    }

    void onKeyReportsEveryKeyOnce() {
        // Many leaves over several chunks and threads, with differences.
        const QString dirA = scratch_.path() + "/many-a", dirB = scratch_.path() + "/many-b";
        writeManyLeaves(dirA, 3, 12, 300000, false);
        writeManyLeaves(dirB, 3, 12, 300000, true);
        const TensorDict a = load(dirA.toStdString()), b = load(dirB.toStdString());

        struct Report {
            KeyPath key;
            KeyStatus status;
            bool pending;
            bool hasValues;
            std::uint64_t differing;
        };
        std::vector<Report> reports;
        std::atomic<int> inside{0};
        std::atomic<bool> overlapped{false};
        CompareOptions o;
        o.numThreads = 2;
        o.onKey = [&](const KeyComparison& k) {
            if (inside.fetch_add(1) != 0)
                overlapped = true;
            reports.push_back({k.key, k.status, k.pending, k.values.has_value(),
                               k.values ? k.values->differing : 0});
            inside.fetch_sub(1);
        };
        const CompareResult r = compare(a, b, o);
        QVERIFY(!overlapped);
        QVERIFY(!r.equal());
        QCOMPARE(r.changed().size(), std::size_t(3 * 2 + 1));  // a leaf per group + "note"

        std::map<KeyPath, int> finals, pendings;
        bool valuesSeen = false;
        for (const Report& rep : reports) {
            if (rep.pending) {
                QVERIFY2(finals.count(rep.key) == 0, "a pending report after the final one");
                ++pendings[rep.key];
                continue;
            }
            ++finals[rep.key];
            // Keys whose values need no reading come first.
            if (rep.hasValues)
                valuesSeen = true;
            else
                QVERIFY2(!valuesSeen, qPrintable("reported after value keys: " + keyText(rep.key)));
            const KeyComparison* k = entryAt(r, rep.key);
            QVERIFY2(k, qPrintable("reported, not in the result: " + keyText(rep.key)));
            QCOMPARE(rep.status, k->status);
            QCOMPARE(rep.hasValues, k->values.has_value());
            if (k->values)
                QCOMPARE(rep.differing, k->values->differing);
        }
        QCOMPARE(finals.size(), r.keys.size());
        for (const KeyComparison& k : r.keys) {
            QVERIFY2(finals[k.key] == 1, qPrintable(keyText(k.key)));
            QVERIFY2(pendings[k.key] <= 1, qPrintable(keyText(k.key)));
        }
    }

    void progressCountsEveryByte() {
        const QString dir = scratch_.path() + "/many-a";
        if (!QFileInfo::exists(dir))
            writeManyLeaves(dir, 3, 12, 300000, false);
        const TensorDict a = load(dir.toStdString()), b = load(dir.toStdString());
        std::uint64_t leafBytes = 0;
        forEachNode(a.root(), [&](const Node& n) {
            if (n.isTensor())
                leafBytes += 2 * n.leaf().nbytes;
        });
        std::vector<CompareProgress> seen;
        std::atomic<int> inside{0};
        bool overlapped = false;
        CompareOptions o;
        o.numThreads = 2;
        o.progress = [&](const CompareProgress& p) {
            if (inside.fetch_add(1) != 0)
                overlapped = true;
            seen.push_back(p);
            inside.fetch_sub(1);
        };
        const CompareResult r = compare(a, b, o);
        QVERIFY(r.equal());
        QVERIFY(!overlapped);
        QVERIFY(!seen.empty());
        for (std::size_t i = 1; i < seen.size(); ++i) {
            QVERIFY(seen[i].bytesDone >= seen[i - 1].bytesDone);
            QVERIFY(seen[i].keysDone >= seen[i - 1].keysDone);
        }
        const CompareProgress& last = seen.back();
        QCOMPARE(last.bytesTotal, leafBytes);
        QCOMPARE(last.bytesDone, last.bytesTotal);
        QCOMPARE(last.keysTotal, r.keys.size());
        QCOMPARE(last.keysDone, last.keysTotal);
    }

    void cancelInFirstProgressCall() {
        // 16 leaves x 4 MiB, one thread: the first report cancels, and most
        // leaves are never finished.
        const QString dir = scratch_.path() + "/cancel";
        {
            TensorDict td = TensorDict::create();
            for (int i = 0; i < 16; ++i)
                td.mutableRoot().addBytes(QString("x%1").arg(i, 2, 10, QChar('0')).toStdString(),
                                          DType::Float32, {1 << 20},
                                          ownedBytes(std::vector<float>(1 << 20, float(i))));
            save(td, dir.toStdString());
        }
        const TensorDict a = load(dir.toStdString()), b = load(dir.toStdString());
        int calls = 0, finished = 0;
        CompareOptions o;
        o.numThreads = 1;
        bool early = true;
        o.progress = [&](const CompareProgress& p) {
            ++calls;
            early = early && p.bytesDone < p.bytesTotal;
            o.cancel.cancel();
        };
        o.onKey = [&](const KeyComparison& k) { finished += k.values && !k.pending; };
        const CompareResult r = compare(a, b, o);
        QVERIFY(r.cancelled);
        QVERIFY(!r.equal());
        QCOMPARE(calls, 1);
        QVERIFY(early);
        QVERIFY2(finished < 16, qPrintable(QString("%1 leaves finished").arg(finished)));
        int done = 0, pending = 0;
        for (const KeyComparison& k : r.keys) {
            if (k.key.empty())
                continue;
            if (k.pending)
                ++pending;
            else if (k.values)
                ++done;
        }
        QCOMPARE(done, finished);
        QCOMPARE(done + pending, 16);
        QVERIFY(pending > 0);
        QVERIFY(r.changed().empty() && r.errors().empty());
    }

    // ---------------------------------------------------------------------
    // Read errors

    void truncatedLeafIsAnError_data() {
        QTest::addColumn<bool>("mappedFirst");  // mapped before the truncation (SIGBUS path)
        QTest::addColumn<bool>("truncateA");
        QTest::newRow("B, before mapping") << false << false;
        QTest::newRow("B, mapped") << true << false;
        QTest::newRow("A, mapped") << true << true;
    }
    void truncatedLeafIsAnError() {
        QFETCH(bool, mappedFirst);
        QFETCH(bool, truncateA);
        const QString tag = QString("truncated-%1-%2").arg(mappedFirst).arg(truncateA);
        const QString dirA = copyFixture("simple", tag + "-a");
        const QString dirB = copyFixture("simple", tag + "-b");
        const TensorDict a = load(dirA.toStdString()), b = load(dirB.toStdString());
        const QString file = (truncateA ? dirA : dirB) + "/b/c.memmap";
        if (mappedFirst) {
            a.root().find({"b", "c"})->bytes();
            b.root().find({"b", "c"})->bytes();
        }
        QVERIFY(QFile::resize(file, 0));

        for (int threads : {1, 2}) {
            CompareOptions o;
            o.numThreads = threads;
            CompareResult r;
            const QString thrown = errorOf([&] { r = compare(a, b, o); });
            QVERIFY2(thrown.isEmpty(), qPrintable("compare() threw: " + thrown));
            QVERIFY(!r.equal());
            QCOMPARE(r.errors().size(), std::size_t(1));
            const KeyComparison& k = *r.errors().front();
            QCOMPARE(k.key, (KeyPath{"b", "c"}));
            QVERIFY(!k.pending);
            const QString message = QString::fromStdString(k.error);
            QVERIFY2(message.contains(file),
                     qPrintable("the message names " + file + ": " + message));
            for (const KeyComparison& other : r.keys)
                if (&other != &k)
                    QVERIFY2(other.status == KeyStatus::Same, qPrintable(describe(other)));
        }
        const QString thrown = errorOf([&] {
            compareValues(*a.root().find({"b", "c"}), *b.root().find({"b", "c"}), {});
        });
        QVERIFY2(thrown.contains(file), qPrintable("compareValues: " + thrown));
    }

    // uint64 values past 2^63 compare exactly: -1 as int64 and 2^64 - 1 as
    // uint64 share their bits but differ by 2^64 - 1 (and the dtype).
    void uint64ComparesExactly() {
        const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
        TensorDict a = TensorDict::create(), b = TensorDict::create();
        a.mutableRoot().addBytes("x", DType::Int64, {1}, ownedBytes(std::vector<std::int64_t>{-1}));
        b.mutableRoot().addBytes("x", DType::UInt64, {1},
                                 ownedBytes(std::vector<std::uint64_t>{big}));
        a.mutableRoot().addBytes("u", DType::UInt64, {2},
                                 ownedBytes(std::vector<std::uint64_t>{big, 1ull << 63}));
        b.mutableRoot().addBytes("u", DType::UInt64, {2},
                                 ownedBytes(std::vector<std::uint64_t>{big - 1, (1ull << 63) - 1}));
        CompareResult r = compare(a, b);
        const KeyComparison* x = entryAt(r, {"x"});
        QVERIFY(x && x->differences == (Difference::DType | Difference::Values));
        QCOMPARE(x->values->differing, std::uint64_t(1));
        QCOMPARE(x->values->maxAbsDiff, double(big));
        const KeyComparison* u = entryAt(r, {"u"});
        QCOMPARE(u->values->differing, std::uint64_t(2));
        QCOMPARE(u->values->maxAbsDiff, 1.0);
        // Within atol 1, across 2^63 and at the top of the range.
        CompareOptions o;
        o.tolerance.atol = 1;
        r = compare(a, b, o);
        QCOMPARE(entryAt(r, {"u"})->status, KeyStatus::Same);
        QCOMPARE(entryAt(r, {"x"})->values->differing, std::uint64_t(1));
    }

    // A tensorclass's non-tensor fields and a leaf's device are compared.
    void attributesAndLeafDeviceAreCompared() {
        auto make = [](const std::string& name, const std::string& device) {
            TensorDict td = TensorDict::create();
            Node& tc = td.mutableRoot().addTensorDict("tc");
            NodeBuilder classBuilder(tc);
            classBuilder.setKind(NodeKind::TensorClass);
            classBuilder.setClass("my.Class", "<class 'my.Class'>");
            classBuilder.collection().attributes.emplace_back("name", Value(name));
            Node& leaf = tc.addBytes("x", DType::Float32, {1}, ownedBytes(std::vector<float>{1}));
            NodeBuilder(leaf).setDevice(device);
            return td;
        };
        const CompareResult r = compare(make("run-1", "cpu"), make("run-2", "cuda:0"));
        QCOMPARE(entryAt(r, {"tc"})->differences, unsigned(Difference::NonTensor));
        QCOMPARE(entryAt(r, {"tc", "x"})->differences, unsigned(Difference::Device));
        QVERIFY(compare(make("same", "cpu"), make("same", "cpu")).equal());
    }

    // --key a --key a/b --key a: the subtree once.
    void overlappingKeysAreComparedOnce() {
        TensorDict td = TensorDict::create();
        Node& sub = td.mutableRoot().addTensorDict("a");
        sub.addBytes("b", DType::Float32, {1}, ownedBytes(std::vector<float>{1}));
        CompareOptions o;
        o.keys = {{"a"}, {"a", "b"}, {"a"}};
        const CompareResult r = compare(td, td, o);
        QCOMPARE(r.keys.size(), std::size_t(2));  // a, a/b
        QVERIFY(r.equal());
    }

    // A callback that throws cancels the comparison and leaves compare() as
    // the exception, from whichever thread it was called on.
    void throwingCallbackLeavesCompare() {
        TensorDict a = TensorDict::create(), b = TensorDict::create();
        for (int i = 0; i < 8; ++i) {
            const std::string key = "x" + std::to_string(i);
            a.mutableRoot().addBytes(key, DType::Float32, {1 << 18},
                                     ownedBytes(std::vector<float>(1 << 18, 0.f)));
            b.mutableRoot().addBytes(key, DType::Float32, {1 << 18},
                                     ownedBytes(std::vector<float>(1 << 18, 1.f)));
        }
        CompareOptions o;
        o.numThreads = 2;
        o.onKey = [](const KeyComparison& k) {
            if (k.status == KeyStatus::Changed)
                throw std::runtime_error("onKey gave up");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, compare(a, b, o));
        CompareOptions p;
        p.numThreads = 2;
        p.progress = [](const CompareProgress&) { throw std::runtime_error("no"); };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, compare(a, b, p));
    }

private:
    // A writable copy of a fixture directory.
    QString copyFixture(const QString& fixture, const QString& tag) {
        const QString dst = scratch_.path() + "/" + tag;
        testsupport::copyTree(testsupport::fixturePath(fixture), dst);
        return dst;
    }

    // `groups` TensorDicts of `leaves` float32 leaves (sizes varying up to
    // `maxElements`), a non-tensor and a zero-element leaf each. `changed`:
    // one leaf per group differs in its last element, one in its first, and
    // the root's note.
    void writeManyLeaves(const QString& dir, int groups, int leaves, int maxElements,
                         bool changed) {
        TensorDict td = TensorDict::create();
        Node& root = td.mutableRoot();
        root.addNonTensor("note", Value(changed ? "changed" : "original"));
        for (int g = 0; g < groups; ++g) {
            Node& group = root.addTensorDict("g" + std::to_string(g));
            for (int l = 0; l < leaves; ++l) {
                const int n = 1 + (maxElements * (l + 1)) / leaves - l;
                std::vector<float> v(static_cast<std::size_t>(n));
                for (int i = 0; i < n; ++i)
                    v[std::size_t(i)] = float((i * 7 + l) % 1000) * 0.5f;
                if (changed && l == 1)
                    v.back() += 1;
                if (changed && l == leaves - 1)
                    v.front() -= 1;
                group.addBytes("x" + std::to_string(l), DType::Float32, {n}, ownedBytes(v));
            }
            group.addBytes("empty", DType::Float32, {0, 3}, ownedBytes(std::vector<float>{}));
            group.addNonTensor("label", Value("group " + std::to_string(g)));
        }
        save(td, dir.toStdString());
    }

    QString setPath(const DataSet& set, const QString& side) const {
        const QString base = scratch_.path() + "/oracle/" + set.name + "-";
        return side == "b.tdz" ? base + "b.tdz" : base + side;
    }

    // Writes every data set (A and B as directories, B also as a deflated
    // archive) and runs assert_close.py once over all cases.
    bool prepareOracle(QString* error) {
        if (oraclePrepared_)
            return oracleError_.isEmpty() || (*error = oracleError_, false);
        oraclePrepared_ = true;
        QJsonArray manifest;
        try {
            QDir().mkpath(scratch_.path() + "/oracle");
            for (DataSet& set : makeDataSets()) {
                save(oneLeaf(set.aType, set.shape, set.a), setPath(set, "a").toStdString());
                const TensorDict b = oneLeaf(set.bType, set.shape, set.b);
                save(b, setPath(set, "b").toStdString());
                SaveOptions deflate;
                deflate.compression = kZipDeflate;
                save(b, setPath(set, "b.tdz").toStdString(), deflate);
                dataSets_[set.name] = set;
            }
        } catch (const Error& e) {
            oracleError_ = QString("writing the data sets: ") + e.what();
            *error = oracleError_;
            return false;
        }
        for (const OracleCase& c : makeOracleCases()) {
            oracleCases_[c.name] = c;
            const DataSet& set = dataSets_.at(c.dataSet);
            QJsonArray shape;
            for (std::int64_t s : set.shape)
                shape.append(qint64(s));
            manifest.append(QJsonObject{{"name", c.name},
                                        {"a", setPath(set, "a") + "/x.memmap"},
                                        {"a_dtype", numpyName(set.aType)},
                                        {"b", setPath(set, "b") + "/x.memmap"},
                                        {"b_dtype", numpyName(set.bType)},
                                        {"shape", shape},
                                        {"rtol", c.tolerance.rtol},
                                        {"atol", c.tolerance.atol},
                                        {"equal_nan", c.tolerance.equalNan}});
        }
        const QString manifestPath = scratch_.path() + "/oracle/cases.json";
        testsupport::writeFile(manifestPath, QJsonDocument(manifest).toJson());
        QString out, pyError;
        if (!testsupport::runPython(
                {TDSTUDIO_TEST_SUPPORT_DIR "/assert_close.py", "--manifest", manifestPath}, &out,
                &pyError)) {
            oracleError_ = "assert_close.py failed: " + pyError;
            *error = oracleError_;
            return false;
        }
        QJsonParseError parseError;
        oracle_ = QJsonDocument::fromJson(out.toUtf8(), &parseError).object();
        if (oracle_.isEmpty()) {
            oracleError_ = "assert_close.py printed no JSON: " + parseError.errorString();
            *error = oracleError_;
            return false;
        }
        return true;
    }

    QTemporaryDir scratch_;
    bool oraclePrepared_ = false;
    QString oracleError_;
    std::map<QString, DataSet> dataSets_;
    std::map<QString, OracleCase> oracleCases_;
    QJsonObject oracle_;
};

QTEST_GUILESS_MAIN(CompareTest)
#include "tst_compare.moc"
