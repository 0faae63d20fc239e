// libFuzzer target: tensordict::parseJson, the reader of every meta.json and
// of non-tensor values. Bad input must throw tensordict::Error, nothing else.
// A document that parses must also go through toJson in every style and
// parse back to an equal Value (NaN equals NaN there). A document that is one
// number with a fraction or exponent must parse to what std::strtod reads (correctly rounded, as
// Python's float() and json.loads). parseJsonMembers(), the member-by-member
// reader of large headers and indexes, must agree with parseJson on every input.
// So must the general reader alone (parseJsonGenerally): parseJson reads the
// plain subset (values/plain_json.h) by a reader of its own, and a text that
// subset claims must be valid JSON; its one-pass reader must take exactly the
// texts the subset's check does.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "../support/json_members_oracle.h"
#include "tensordict/error.h"
#include "tensordict/value.h"
#include "values/plain_json.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz_json: %s\n%s\n", what, detail.c_str());
    std::abort();
}

// parseJsonMembers() must read what parseJson() reads: it throws exactly
// when parseJson() does, and otherwise hands over the same document (the
// members of "w" streamed one by one), or says it is no object.
void membersAgree(const std::string& text, const tensordict::Value* parsed) {
    std::optional<tensordict::Value> members;
    try {
        members = oracle::viaMembers(text, "w");
    } catch (const tensordict::Error&) {
        if (parsed)
            fail("parseJsonMembers refuses what parseJson reads", text);
        return;
    }
    if (!parsed)
        fail("parseJsonMembers reads what parseJson refuses", text);
    if (parsed->isObject() ? !members || *members != *parsed : members.has_value())
        fail("parseJsonMembers hands over another document", text);
}

// The general reader reads what parseJson() reads, or refuses it as well;
// a text the plain subset claims it reads.
void generalAgrees(const std::string& text, const tensordict::Value* parsed) {
    std::optional<tensordict::Value> general;
    try {
        general = tensordict::parseJsonGenerally(text, "fuzz.json");
    } catch (const tensordict::Error&) {
    }
    const bool plain = tensordict::isPlainJson(text);
    if (plain && !general)
        fail("the plain subset claims text the general reader refuses", text);
    // The one-pass reader (parseJson's first) takes exactly the plain texts, reading them alike.
    const std::optional<tensordict::Value> onePass = tensordict::readPlainJson(text);
    if (onePass.has_value() != plain)
        fail("the one-pass reader and the plain subset's check disagree", text);
    if (onePass && (!general || *onePass != *general))
        fail("the one-pass reader reads a plain text differently", text);
    if (!parsed != !general || (parsed && *parsed != *general))
        fail("parseJson and the general reader read the text differently", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using tensordict::JsonStyle;
    const std::string input(reinterpret_cast<const char*>(data), size);
    tensordict::Value value;
    try {
        value = tensordict::parseJson(input, "fuzz.json");
    } catch (const tensordict::Error&) {
        membersAgree(input, nullptr);
        generalAgrees(input, nullptr);
        return 0;
    }
    membersAgree(input, &value);
    generalAgrees(input, &value);
    if (value.isDouble()) {  // integers stay exact integers, as json.loads reads them
        const std::string text(reinterpret_cast<const char*>(data), size);
        char* end = nullptr;
        const double expected = std::strtod(text.c_str(), &end);
        if (text.find_first_not_of(" \t\n\r", static_cast<std::size_t>(end - text.data())) ==
                std::string::npos &&
            value != tensordict::Value(expected)) {
            char detail[128];
            std::snprintf(detail, sizeof detail, "parseJson gave %.17g, strtod %.17g",
                          value.asDouble(), expected);
            fail("a number parses to another value than strtod's", detail);
        }
    }
    for (const JsonStyle style :
         {JsonStyle::Python, JsonStyle::Compact, JsonStyle::Pretty, JsonStyle::PythonCompact}) {
        std::string text;
        try {
            text = tensordict::toJson(value, style);
            if (tensordict::parseJson(text, "round trip") != value)
                fail("toJson output parses to a different value", text);
        } catch (const tensordict::Error& e) {
            fail("toJson output does not parse back", std::string(e.what()) + "\n" + text);
        }
    }
    return 0;
}
