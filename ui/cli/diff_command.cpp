#include "diff_command.h"

#include "load_settings.h"
#include "node_text.h"
#include "open_failure.h"
#include "options.h"

#include <cmath>
#include <string>

#include "tensordict/compare.h"
#include "tensordict/error.h"
#include "tensordict/value.h"

namespace cli {
namespace {

using tensordict::Value;

Value keyValue(const std::vector<std::string>& key) {
    Value::List list;
    for (const auto& k : key)
        list.emplace_back(k);
    return Value(std::move(list));
}

Value indexValue(const std::vector<std::int64_t>& index) {
    Value::List list;
    for (std::int64_t i : index)
        list.emplace_back(i);
    return Value(std::move(list));
}

std::string keyText(const std::vector<std::string>& key) {
    return tensordict::toJson(keyValue(key));
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    return tensordict::toJson(indexValue(shape));
}

std::string numberText(double x) {
    return tensordict::toJson(Value(x));
}

std::string dimsText(const tensordict::Node& n) {
    return n.isTensor() ? shapeText(n.leaf().shape) : shapeText(n.batchSize());
}

std::string classText(const tensordict::Node& n) {
    return std::string(tensordict::kindName(n.kind())) + (n.isTensor() ? "" : " " + n.className());
}

// A non-tensor's value, or a tensorclass's fields and a view's parameters.
std::string nonTensorText(const tensordict::Node& n) {
    if (n.isNonTensor() && n.nonTensor().pickleOpaque)
        return "<pickle " + n.nonTensor().pickleFile + ">";
    std::string text = tensordict::toJson(
        n.isCollection() ? tensordict::Value(n.collection().attributes) : n.value());
    if (text.size() > 80)
        text = text.substr(0, 77) + "...";
    return text;
}

// One line per difference of a changed key: "dtype: torch.float32 -> torch.float64".
std::string describeChange(const tensordict::KeyComparison& k) {
    using tensordict::Difference;
    const tensordict::Node& a = *k.a;
    const tensordict::Node& b = *k.b;
    std::string text;
    auto add = [&text](const std::string& part) { text += "\n    " + part; };
    for (Difference d : tensordict::differencesOf(k.differences)) {
        const std::string name(tensordict::differenceName(d));
        switch (d) {
            case Difference::Class:
                add(name + ": " + classText(a) + " -> " + classText(b));
                break;
            case Difference::BatchSize:
                add(name + ": " + shapeText(a.batchSize()) + " -> " + shapeText(b.batchSize()));
                break;
            case Difference::Device:
                add(name + ": " + a.device().value_or("None") + " -> " +
                    b.device().value_or("None"));
                break;
            case Difference::DType:
                add(name + ": " + std::string(tensordict::dtypeName(a.leaf().dtype)) + " -> " +
                    std::string(tensordict::dtypeName(b.leaf().dtype)));
                break;
            case Difference::Shape:
                add(name + ": " + dimsText(a) + " -> " + dimsText(b));
                break;
            case Difference::Values: {
                const auto& v = *k.values;
                const std::uint64_t total = a.leaf().nbytes / tensordict::itemSize(a.leaf().dtype);
                std::string nans;
                if (v.nanDiffering)
                    nans = " (" + std::to_string(v.nanDiffering) +
                           " with NaN: equal only with --equal-nan)";
                // The maxima are over elements without a NaN: when every
                // difference has one, there is no number to give.
                const std::string size = v.nanDiffering == v.differing
                                             ? ", differing only in NaN positions"
                                             : ", max abs diff " + numberText(v.maxAbsDiff) +
                                                   ", max rel diff " + numberText(v.maxRelDiff);
                add(name + ": " + std::to_string(v.differing) + " of " + std::to_string(total) +
                    " elements differ" + nans + size + ", first at " + shapeText(k.firstIndex));
                break;
            }
            case Difference::NonTensor:
                add(name + ": " + nonTensorText(a) + " -> " + nonTensorText(b));
                break;
        }
    }
    return text;
}

// Plain JSON has no infinity (a relative difference where b is 0): null.
Value finiteOrNull(double x) {
    return std::isfinite(x) ? Value(x) : Value();
}

Value jsonReport(const tensordict::CompareResult& result) {
    Value::List onlyA, onlyB, changed, errors;
    for (const auto* k : result.onlyInA())
        onlyA.push_back(keyValue(k->key));
    for (const auto* k : result.onlyInB())
        onlyB.push_back(keyValue(k->key));
    for (const auto* k : result.changed()) {
        Value::List kinds;
        for (auto d : tensordict::differencesOf(k->differences))
            kinds.emplace_back(std::string(tensordict::differenceName(d)));
        Value::Object entry{{"key", keyValue(k->key)}, {"kinds", Value(std::move(kinds))}};
        if (hasDifference(k->differences, tensordict::Difference::Values)) {
            const auto& v = *k->values;
            const bool onlyNan = v.nanDiffering == v.differing;  // no maxima to give
            entry.emplace_back("differing", Value(static_cast<std::int64_t>(v.differing)));
            entry.emplace_back("nan_differing", Value(static_cast<std::int64_t>(v.nanDiffering)));
            entry.emplace_back("max_abs_diff", onlyNan ? Value() : finiteOrNull(v.maxAbsDiff));
            entry.emplace_back("max_rel_diff", onlyNan ? Value() : finiteOrNull(v.maxRelDiff));
            entry.emplace_back("first_index", indexValue(k->firstIndex));
        }
        changed.emplace_back(std::move(entry));
    }
    for (const auto* k : result.errors())
        errors.emplace_back(Value::Object{{"key", keyValue(k->key)}, {"error", Value(k->error)}});
    Value::Object doc{{"equal", Value(result.equal())},
                      {"only_in_a", Value(std::move(onlyA))},
                      {"only_in_b", Value(std::move(onlyB))},
                      {"changed", Value(std::move(changed))}};
    if (!errors.empty())
        doc.emplace_back("errors", Value(std::move(errors)));
    return Value(std::move(doc));
}

std::string textReport(const tensordict::CompareResult& result) {
    std::string text;
    std::size_t same = 0;
    for (const auto& k : result.keys) {
        switch (k.status) {
            case tensordict::KeyStatus::Same:
                ++same;
                break;
            case tensordict::KeyStatus::OnlyInA:
                text += "only in A: " + keyText(k.key) + '\n';
                break;
            case tensordict::KeyStatus::OnlyInB:
                text += "only in B: " + keyText(k.key) + '\n';
                break;
            case tensordict::KeyStatus::Changed:
                text += "changed:   " + keyText(k.key) + describeChange(k) + '\n';
                break;
            case tensordict::KeyStatus::Error:
                text += "error:     " + keyText(k.key) + "\n    " + k.error + '\n';
                break;
        }
    }
    text += std::to_string(result.keys.size()) + " keys: " + std::to_string(same) + " same, " +
            std::to_string(result.changed().size()) + " changed, " +
            std::to_string(result.onlyInA().size()) + " only in A, " +
            std::to_string(result.onlyInB().size()) + " only in B";
    if (const auto errors = result.errors().size())
        text += ", " + std::to_string(errors) + " unreadable";
    text += result.equal() ? "\nequal\n" : "\ndifferent\n";
    return text;
}

}  // namespace

int diff(const DiffRequest& request, QTextStream& out, QTextStream& err) {
    try {
        const tensordict::TensorDict a =
            tensordict::load(request.a.toStdString(), loadOptionsFromSettings(/*tolerant=*/false));
        const tensordict::TensorDict b =
            tensordict::load(request.b.toStdString(), loadOptionsFromSettings(/*tolerant=*/false));
        tensordict::CompareOptions options;
        options.tolerance = {request.rtol, request.atol, request.equalNan};
        options.numThreads = request.threads;
        options.keys = keyPaths(request.keys);
        const tensordict::CompareResult result = tensordict::compare(a, b, options);
        if (request.json) {
            out << QString::fromStdString(tensordict::toStrictJson(jsonReport(result))) << '\n';
        } else {
            out << "A: " << QString::fromStdString(a.path())
                << "\nB: " << QString::fromStdString(b.path()) << '\n'
                << QString::fromStdString(textReport(result));
        }
        out.flush();
        for (const auto* k : result.errors())
            err << "tdstudio: " << nodetext::displayText(k->error) << '\n';
        if (!result.errors().empty())
            return 2;
        return result.equal() ? 0 : 1;
    } catch (const std::exception& e) {
        out.flush();
        err << "tdstudio: " << commandLineFailure(e) << '\n';
        return 2;
    }
}

}  // namespace cli
