#include "sources/s3_config.h"

#include "sources/http_headers.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>

#include "tensordict/error.h"

namespace tensordict::s3 {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string::npos)
        return {};
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// The keys of one section of an AWS INI file; a nested block ("s3 =" then
// indented lines) is kept as "s3.addressing_style".
std::map<std::string, std::string> readSection(const std::string& path,
                                               const std::string& section) {
    std::map<std::string, std::string> keys;
    std::ifstream in(path);
    std::string line, nested;
    bool inside = false;
    while (std::getline(in, line)) {
        const std::string text = trim(line);
        if (text.empty() || text[0] == '#' || text[0] == ';')
            continue;
        if (text.front() == '[') {
            inside = text == "[" + section + "]";
            nested.clear();
            continue;
        }
        const auto eq = text.find('=');
        if (!inside || eq == std::string::npos)
            continue;
        const std::string name = trim(text.substr(0, eq)), value = trim(text.substr(eq + 1));
        const bool indented = line[0] == ' ' || line[0] == '\t';
        if (!indented)
            nested = value.empty() ? name : "";
        keys[indented && !nested.empty() ? nested + '.' + name : name] = value;
    }
    return keys;
}

std::string home(const char* rest) {
    return env("HOME") + rest;
}

std::string firstOf(std::initializer_list<std::string> values) {
    for (const std::string& v : values)
        if (!v.empty())
            return v;
    return {};
}

// Names a bucket can have as part of a host name (RFC 1123 labels, no dots:
// a dotted name does not match a TLS certificate's wildcard).
bool hostCompatible(const std::string& bucket) {
    if (bucket.size() < 3 || bucket.size() > 63 || bucket.front() == '-' || bucket.back() == '-')
        return false;
    for (const char c : bucket)
        if (!(std::islower(static_cast<unsigned char>(c)) ||
              std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
            return false;
    return true;
}

// The bucket's Host and path prefix ("/bucket" path-style, "" virtual-hosted),
// and the scheme, as botocore addresses them (us-east-1: s3.amazonaws.com).
struct BucketAt {
    std::string scheme, host, path;
};

BucketAt bucketAt(const Config& config, const std::string& bucket) {
    std::string endpoint = !config.endpoint.empty() ? config.endpoint
                           : config.region == "us-east-1"
                               ? "https://s3.amazonaws.com"
                               : "https://s3." + config.region + ".amazonaws.com";
    const auto schemeEnd = endpoint.find("://");
    const std::string scheme =
        schemeEnd == std::string::npos ? "https" : endpoint.substr(0, schemeEnd);
    std::string host = schemeEnd == std::string::npos ? endpoint : endpoint.substr(schemeEnd + 3);
    std::string base;  // a path the endpoint itself has
    if (const auto slash = host.find('/'); slash != std::string::npos) {
        base = host.substr(slash);
        host.resize(slash);
    }
    // The Host header leaves out the scheme's own port, as clients send it.
    const std::string_view port = scheme == "https" ? ":443" : ":80";
    if (host.size() > port.size() &&
        std::string_view(host).substr(host.size() - port.size()) == port)
        host.resize(host.size() - port.size());

    if (config.pathStyle || !hostCompatible(bucket))
        return {scheme, host, base + '/' + http::percentEncode(bucket, false)};
    return {scheme, bucket + '.' + host, base};
}

}  // namespace

Config loadConfig() {
    const std::string profile = firstOf({env("AWS_PROFILE"), "default"});
    const auto credentialsFile = readSection(
        firstOf({env("AWS_SHARED_CREDENTIALS_FILE"), home("/.aws/credentials")}), profile);
    const auto configFile = readSection(firstOf({env("AWS_CONFIG_FILE"), home("/.aws/config")}),
                                        profile == "default" ? profile : "profile " + profile);
    const auto fromFiles = [&](const std::string& key) {
        const auto c = credentialsFile.find(key);
        if (c != credentialsFile.end())
            return c->second;
        const auto f = configFile.find(key);
        return f != configFile.end() ? f->second : std::string();
    };

    Config config;
    if (!env("AWS_ACCESS_KEY_ID").empty()) {
        config.credentials = {env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
                              env("AWS_SESSION_TOKEN")};
    } else {
        config.credentials = {fromFiles("aws_access_key_id"), fromFiles("aws_secret_access_key"),
                              fromFiles("aws_session_token")};
    }
    config.region =
        firstOf({env("AWS_REGION"), env("AWS_DEFAULT_REGION"), fromFiles("region"), config.region});
    config.endpoint = firstOf({env("AWS_ENDPOINT_URL_S3"), env("AWS_ENDPOINT_URL"),
                               fromFiles("s3.endpoint_url"), fromFiles("endpoint_url")});
    while (!config.endpoint.empty() && config.endpoint.back() == '/')
        config.endpoint.pop_back();
    const std::string style = fromFiles("s3.addressing_style");
    config.pathStyle = style == "path" || (style != "virtual" && !config.endpoint.empty());
    return config;
}

Object parseLocation(const std::string& location) {
    constexpr std::string_view kScheme = "s3://";
    if (location.compare(0, kScheme.size(), kScheme) != 0)
        throw Error::invalid(location, "not an s3:// location");
    const std::string rest = location.substr(kScheme.size());
    const auto slash = rest.find('/');
    Object object{rest.substr(0, slash), slash == std::string::npos ? "" : rest.substr(slash + 1)};
    if (object.bucket.empty())
        throw Error::invalid(location, "names no bucket (s3://BUCKET/KEY)");
    return object;
}

Address addressOf(const Config& config, const Object& object) {
    const BucketAt at = bucketAt(config, object.bucket);
    Address a;
    a.host = at.host;
    a.path = at.path + '/' + http::percentEncode(object.key, true);
    a.url = at.scheme + "://" + a.host + a.path;
    return a;
}

Address listingAddressOf(const Config& config, const std::string& bucket, const Headers& query) {
    const BucketAt at = bucketAt(config, bucket);
    Address a;
    a.host = at.host;
    a.path = at.path.empty() ? "/" : at.path;
    a.url = at.scheme + "://" + a.host + a.path + '?' + canonicalQuery(query);
    return a;
}

}  // namespace tensordict::s3
