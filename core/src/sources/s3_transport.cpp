// s3:// locations: objects read with signed range requests over the HTTP
// transport's reader (its blocks, read-ahead, retries and limits), the
// version checked with If-Match so a replaced object is "changed", never
// mixed bytes. Folders are found by their meta.json, never by listing.

#include "sources/s3_transport.h"

#include <algorithm>
#include <ctime>

#include "sources/http_transport.h"
#include "sources/s3_config.h"
#include "tensordict/error.h"
#include "tensordict/s3.h"

namespace tensordict {
namespace {

// XML text with its five entities replaced.
std::string unescaped(const std::string& text) {
    static const std::pair<const char*, char> kEntities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        bool replaced = false;
        if (text[i] == '&')
            for (const auto& [entity, c] : kEntities)
                if (text.compare(i, std::char_traits<char>::length(entity), entity) == 0) {
                    out += c;
                    i += std::char_traits<char>::length(entity) - 1;
                    replaced = true;
                    break;
                }
        if (!replaced)
            out += text[i];
    }
    return out;
}

// The texts of every <Tag>…</Tag> in `xml`, in order (S3's answers have no
// attributes on the elements read here, and no nesting of a tag in itself).
std::vector<std::string> xmlTexts(const std::string& xml, const std::string& tag) {
    std::vector<std::string> texts;
    const std::string open = '<' + tag + '>', close = "</" + tag + '>';
    for (auto at = xml.find(open); at != std::string::npos; at = xml.find(open, at)) {
        const auto start = at + open.size();
        const auto end = xml.find(close, start);
        if (end == std::string::npos)
            break;
        texts.push_back(xml.substr(start, end - start));
        at = end + close.size();
    }
    return texts;
}

std::string xmlText(const std::string& xml, const std::string& tag) {
    const std::vector<std::string> texts = xmlTexts(xml, tag);
    return texts.empty() ? std::string() : unescaped(texts.front());
}

int hexDigit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// %XY as its byte; with `plusIsSpace`, '+' as a space (how S3 encodes the
// names of a listing asked for with encoding-type=url, as form data).
std::string percentDecoded(const std::string& text, bool plusIsSpace = false) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (plusIsSpace && text[i] == '+') {
            out += ' ';
            continue;
        }
        if (text[i] == '%' && i + 2 < text.size() && hexDigit(text[i + 1]) >= 0 &&
            hexDigit(text[i + 2]) >= 0) {
            out += static_cast<char>(hexDigit(text[i + 1]) * 16 + hexDigit(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

// The request a URL is, as signing sees it: its Host, path and query.
s3::Request requestOf(const std::string& url, const s3::Headers& headers) {
    s3::Request r;
    const auto hostStart = url.find("://") + 3;
    const auto pathStart = url.find('/', hostStart);
    r.host = url.substr(hostStart, pathStart - hostStart);
    std::string path = pathStart == std::string::npos ? "/" : url.substr(pathStart);
    if (const auto q = path.find('?'); q != std::string::npos) {
        const std::string query = path.substr(q + 1);
        path.resize(q);
        for (std::size_t at = 0; at <= query.size();) {
            const auto end = std::min(query.find('&', at), query.size());
            const std::string pair = query.substr(at, end - at);
            const auto eq = pair.find('=');
            if (!pair.empty())
                r.query.emplace_back(
                    percentDecoded(pair.substr(0, eq)),
                    eq == std::string::npos ? "" : percentDecoded(pair.substr(eq + 1)));
            at = end + 1;
        }
    }
    r.path = path;
    r.headers = headers;
    return r;
}

}  // namespace

void throwS3Failure(const std::string& location, long status, const std::string& body) {
    const std::string code = xmlText(body, "Code");
    if (code.empty())
        return;  // not S3's answer: the status decides
    const std::string message = xmlText(body, "Message");
    const std::string reason = "S3 " + code + " (HTTP " + std::to_string(status) + ")" +
                               (message.empty() ? "" : ": " + message);
    if (code == "NoSuchKey" || code == "NoSuchBucket")
        throw Error::notFound(location, reason);
    if (code == "AccessDenied" || code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId" ||
        code == "ExpiredToken" || code == "InvalidToken" || code == "TokenRefreshRequired" ||
        code == "AllAccessDisabled")
        throw Error::denied(location, reason + " (credentials: AWS_ACCESS_KEY_ID, AWS_PROFILE)");
    throw Error::network(location, reason);
}

void signS3Request(const std::string& url, s3::Headers& headers) {
    const s3::Config config = s3::loadConfig();
    if (config.credentials.empty())
        return;  // a public bucket: unsigned
    for (auto& h :
         s3::signV4(requestOf(url, headers), config.credentials, config.region, std::time(nullptr)))
        headers.push_back(std::move(h));
}

namespace {

HttpDialect s3Dialect() {
    HttpDialect dialect;
    dialect.urlOf = [](const std::string& location) {
        return s3::addressOf(s3::loadConfig(), s3::parseLocation(location)).url;
    };
    dialect.authorize = signS3Request;
    dialect.failure = throwS3Failure;
    dialect.ifMatch = true;
    dialect.rawNames = true;
    dialect.deniedMayBeFolder = true;
    return dialect;
}

}  // namespace

std::shared_ptr<const Transport> s3Transport() {
    return httpTransport("s3", s3Dialect());
}

S3ListingPage parseS3Listing(const std::string& location, const std::string& bucket,
                             const std::string& prefix, const std::string& xml) {
    if (xml.find("<ListBucketResult") == std::string::npos)
        throw Error::corrupt(location, "the answer to a listing is not a ListBucketResult");
    const std::string base = "s3://" + bucket + '/';
    // With EncodingType url the names come percent-encoded (S3 does; a
    // server that ignores the parameter says no EncodingType).
    const bool encoded = xmlText(xml, "EncodingType") == "url";
    const auto name = [&](const std::string& text) {
        return encoded ? percentDecoded(text, true) : text;
    };
    S3ListingPage page;
    for (const std::string& folder : xmlTexts(xml, "CommonPrefixes")) {
        const std::string key = name(xmlText(folder, "Prefix"));
        if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0)
            page.folders.push_back({base + key, key.substr(prefix.size()), true, 0, {}});
    }
    for (const std::string& object : xmlTexts(xml, "Contents")) {
        const std::string key = name(xmlText(object, "Key"));
        // The folder's own marker object, or a key outside it.
        if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0)
            continue;
        S3Entry e{base + key, key.substr(prefix.size()), false, 0, xmlText(object, "LastModified")};
        e.size = std::strtoull(xmlText(object, "Size").c_str(), nullptr, 10);
        page.objects.push_back(std::move(e));
    }
    page.nextToken = xmlText(xml, "IsTruncated") == "true" ? xmlText(xml, "NextContinuationToken")
                                                           : std::string();
    return page;
}

std::vector<S3Entry> listS3(const std::string& location, const TransportOptions& options) {
    s3::Object at = s3::parseLocation(location);
    if (!at.key.empty() && at.key.back() != '/')
        at.key += '/';  // the folder's entries, not its siblings
    const s3::Config config = s3::loadConfig();
    const HttpDialect dialect = s3Dialect();
    std::vector<S3Entry> folders, objects;
    std::string token;
    do {
        s3::Headers query{{"list-type", "2"}, {"delimiter", "/"}, {"encoding-type", "url"}};
        if (!at.key.empty())
            query.emplace_back("prefix", at.key);
        if (!token.empty())
            query.emplace_back("continuation-token", token);
        S3ListingPage page = parseS3Listing(
            location, at.bucket, at.key,
            httpGetDocument(location, s3::listingAddressOf(config, at.bucket, query).url, dialect,
                            options));
        for (auto* part : {&page.folders, &page.objects})
            for (S3Entry& e : *part)
                (e.isFolder ? folders : objects).push_back(std::move(e));
        if (!page.nextToken.empty() && page.nextToken == token)
            throw Error::corrupt(location, "the listing's next page is the page just read");
        token = std::move(page.nextToken);
    } while (!token.empty());
    const auto byName = [](const S3Entry& a, const S3Entry& b) { return a.name < b.name; };
    std::sort(folders.begin(), folders.end(), byName);
    std::sort(objects.begin(), objects.end(), byName);
    folders.insert(folders.end(), std::make_move_iterator(objects.begin()),
                   std::make_move_iterator(objects.end()));
    return folders;
}

}  // namespace tensordict
