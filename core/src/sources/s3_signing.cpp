#include "sources/s3_signing.h"

#include "sources/http_headers.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace tensordict::s3 {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string hex(const unsigned char* bytes, unsigned n) {
    std::string out;
    out.reserve(n * 2);
    for (unsigned i = 0; i < n; ++i) {
        out += kHex[bytes[i] >> 4];
        out += kHex[bytes[i] & 15];
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Trimall: no spaces around, runs of spaces inside as one.
std::string trimAll(std::string_view value) {
    std::string out;
    bool space = false;
    for (const char c : value) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            space = !out.empty();
            continue;
        }
        if (space)
            out += ' ';
        space = false;
        out += c;
    }
    return out;
}

std::string timestamp(std::time_t now) {
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[17];
    std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
    return text;
}

}  // namespace

std::string canonicalQuery(const Headers& query) {
    std::vector<std::pair<std::string, std::string>> encoded;
    for (const auto& [name, value] : query)
        encoded.emplace_back(http::percentEncode(name, false), http::percentEncode(value, false));
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [name, value] : encoded)
        out += (out.empty() ? "" : "&") + name + '=' + value;
    return out;
}

std::string sha256Hex(std::string_view data) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(data.data(), data.size(), digest, &n, EVP_sha256(), nullptr);
    return hex(digest, n);
}

std::string hmacSha256(std::string_view key, std::string_view data) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &n);
    return std::string(reinterpret_cast<const char*>(digest), n);
}

Headers signV4(const Request& request, const Credentials& credentials, const std::string& region,
               std::time_t now) {
    const std::string when = timestamp(now);
    const std::string day = when.substr(0, 8);
    const std::string payloadHash = sha256Hex("");

    Headers added{{"X-Amz-Date", when}, {"X-Amz-Content-SHA256", payloadHash}};
    if (!credentials.sessionToken.empty())
        added.emplace_back("X-Amz-Security-Token", credentials.sessionToken);

    // Lowercase names in order; a name sent twice is signed as "a,b".
    std::map<std::string, std::string> signedHeaders{{"host", trimAll(request.host)}};
    for (const Headers* list : {&request.headers, static_cast<const Headers*>(&added)})
        for (const auto& [name, value] : *list) {
            std::string& v = signedHeaders[lower(name)];
            v += (v.empty() ? "" : ",") + trimAll(value);
        }
    std::string canonicalHeaders, names;
    for (const auto& [name, value] : signedHeaders) {
        canonicalHeaders += name + ':' + value + '\n';
        names += (names.empty() ? "" : ";") + name;
    }

    const std::string canonicalRequest = request.method + '\n' + request.path + '\n' +
                                         canonicalQuery(request.query) + '\n' + canonicalHeaders +
                                         '\n' + names + '\n' + payloadHash;
    const std::string scope = day + '/' + region + "/s3/aws4_request";
    const std::string stringToSign =
        "AWS4-HMAC-SHA256\n" + when + '\n' + scope + '\n' + sha256Hex(canonicalRequest);
    std::string key = hmacSha256("AWS4" + credentials.secretKey, day);
    key = hmacSha256(key, region);
    key = hmacSha256(key, "s3");
    key = hmacSha256(key, "aws4_request");
    const std::string signature = hmacSha256(key, stringToSign);

    added.emplace_back("Authorization",
                       "AWS4-HMAC-SHA256 Credential=" + credentials.accessKey + '/' + scope +
                           ", SignedHeaders=" + names + ", Signature=" +
                           hex(reinterpret_cast<const unsigned char*>(signature.data()),
                               static_cast<unsigned>(signature.size())));
    return added;
}

}  // namespace tensordict::s3
