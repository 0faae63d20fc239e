#include "sources/http_transport.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "base/lru_cache.h"
#include "sources/http_headers.h"
#include "sources/mapping.h"
#include "tensordict/cancel.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

constexpr std::uint64_t kBlock = 64u << 10;       // the unit of reads and of the cache
constexpr std::uint64_t kMaxAhead = 8u << 20;     // the most a sequential read fetches ahead
constexpr std::uint64_t kMaxRequest = 16u << 20;  // the most one request asks for
constexpr int kAttempts = 4;                      // for 429, 5xx and dropped connections
constexpr long kMaxRedirects = 8;
constexpr long kConnectTimeoutSeconds = 20;

std::atomic<std::uint64_t> requestCount{0}, byteCount{0}, inFlightCount{0};

// libcurl, loaded with the first request rather than by every process
// that links the library: it and what it brings (TLS, Kerberos, LDAP, SSH)
// took 7.5 ms of each start, most of a command's own start.
struct LibCurl {
    CURL* (*easyInit)();
    void (*easyCleanup)(CURL*);
    void (*easyReset)(CURL*);
    CURLcode (*easySetopt)(CURL*, CURLoption, ...);
    CURLcode (*easyPerform)(CURL*);
    CURLcode (*easyGetinfo)(CURL*, CURLINFO, ...);
    const char* (*easyStrerror)(CURLcode);
    curl_slist* (*slistAppend)(curl_slist*, const char*);
    void (*slistFreeAll)(curl_slist*);
};

constexpr const char* kLibCurl = "libcurl.so.4";

// Loaded and initialised once; throws Error naming the library when it
// cannot be (the package depends on it; a copy of the program may not).
const LibCurl& libcurl() {
    struct Loaded {
        LibCurl curl{};
        std::string failure;
    };
    static const Loaded loaded = [] {
        Loaded l;
        void* handle = ::dlopen(kLibCurl, RTLD_NOW | RTLD_LOCAL);  // kept until the process ends
        if (!handle) {
            const char* why = ::dlerror();
            l.failure = why ? why : "cannot be loaded";
            return l;
        }
        bool found = true;
        const auto symbol = [&](auto& function, const char* name) {
            function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
                ::dlsym(handle, name));
            found = found && function;
        };
        LibCurl& c = l.curl;
        symbol(c.easyInit, "curl_easy_init");
        symbol(c.easyCleanup, "curl_easy_cleanup");
        symbol(c.easyReset, "curl_easy_reset");
        symbol(c.easySetopt, "curl_easy_setopt");
        symbol(c.easyPerform, "curl_easy_perform");
        symbol(c.easyGetinfo, "curl_easy_getinfo");
        symbol(c.easyStrerror, "curl_easy_strerror");
        symbol(c.slistAppend, "curl_slist_append");
        symbol(c.slistFreeAll, "curl_slist_free_all");
        CURLcode (*globalInit)(long) = nullptr;
        symbol(globalInit, "curl_global_init");
        if (!found)
            l.failure = "a libcurl without the functions this program calls";
        else if (globalInit(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            l.failure = "libcurl could not be initialised";
        return l;
    }();
    if (!loaded.failure.empty())
        throw Error::unsupported(kLibCurl, "HTTP needs libcurl: " + loaded.failure);
    return loaded.curl;
}

// One response: its status, the headers we use and its body.
struct Response {
    long status = 0;
    std::string body;
    http::ResponseHeaders headers;
    std::string effectiveUrl;
    bool truncatedOnPurpose = false;  // a 200 to a range request, cut off
    std::uint64_t received = 0;       // body bytes
    std::vector<LeafBytes> blocks;    // the body, kBlock bytes each (BodyTarget::blocks)
    const std::string& validator() const { return headers.validator(); }
    std::optional<http::ContentRange> range() const {
        return http::parseContentRange(headers.contentRange);
    }
};

// Where a response's body goes: Response::body; cache blocks of kBlock
// bytes (Response::blocks), one copy less on the way to the reader; or the
// reader's own buffer, no copy at all.
struct BodyTarget {
    bool blocks = false;
    std::byte* buffer = nullptr;
};

constexpr std::size_t kMaxErrorBody = 64u << 10;  // what of an error's body is kept
constexpr std::uint64_t kMaxDocument = 1u << 20;  // a request without a range: the most it takes

struct Transfer {
    Response* response;
    std::uint64_t limit;  // body bytes accepted: more means the server ignored the range
    BodyTarget target;
};

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    Response& r = *t->response;
    const std::size_t n = size * count;
    if (r.headers.status >= 300) {  // an error's or a redirect's, never the reader's bytes
        r.body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, r.body.size())));
        return n;
    }
    if (r.received + n > t->limit) {
        r.truncatedOnPurpose = true;
        return 0;  // aborts: never download a whole file that was not asked for
    }
    byteCount += n;  // as it comes: the window's count moves during a long answer
    if (t->target.buffer) {
        std::memcpy(t->target.buffer + r.received, data, n);
    } else if (!t->target.blocks) {
        r.body.append(data, n);
    } else {
        for (std::size_t done = 0; done < n;) {
            const std::uint64_t inBlock = r.received % kBlock;
            if (inBlock == 0)
                r.blocks.push_back(allocateOwnedBuffer(kBlock));
            const std::size_t take =
                static_cast<std::size_t>(std::min<std::uint64_t>(n - done, kBlock - inBlock));
            std::memcpy(r.blocks.back().data.get() + inBlock, data + done, take);
            done += take;
            r.received += take;
        }
        return n;
    }
    r.received += n;
    return n;
}

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
    const std::size_t n = size * count;
    static_cast<Response*>(user)->headers.addLine(std::string_view(data, n));
    return n;
}

// What libcurl's progress callback watches, a few times a second even
// while no byte comes: the reader's cancel token, and a stall (no byte for
// `stallSeconds`; libcurl's own low-speed check averages over a window).
struct Watch {
    const CancelToken* cancel = nullptr;
    std::chrono::seconds stall;
    curl_off_t lastBytes = -1;
    std::chrono::steady_clock::time_point lastChange;
    bool stalled = false;
};

int onProgress(void* user, curl_off_t, curl_off_t now, curl_off_t, curl_off_t sent) {
    auto* w = static_cast<Watch*>(user);
    if (w->cancel && w->cancel->isCancelled())
        return 1;
    const auto t = std::chrono::steady_clock::now();
    if (now + sent != w->lastBytes) {
        w->lastBytes = now + sent;
        w->lastChange = t;
    } else if (t - w->lastChange >= w->stall) {
        w->stalled = true;
        return 1;
    }
    return 0;
}

// Waits `ms` before a retry, or less when the read is cancelled meanwhile.
void backOff(int ms, const CancelToken* cancel, const std::string& url) {
    for (int waited = 0; waited < ms; waited += 20) {
        if (cancel)
            cancel->throwIfCancelled(url);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::string reasonOf(long status) {
    switch (status) {
        case 401:
            return "401 Unauthorized";
        case 403:
            return "403 Forbidden";
        case 404:
            return "404 Not Found";
        case 410:
            return "410 Gone";
        case 416:
            return "416 Range Not Satisfiable";
        case 429:
            return "429 Too Many Requests";
        default:
            return std::to_string(status);
    }
}

// Connections kept alive between requests, a few at once (one per reading
// thread, up to kIdle kept).
class HandlePool {
public:
    ~HandlePool() {
        for (CURL* h : idle_)  // a handle was made, so libcurl is loaded
            libcurl().easyCleanup(h);
    }
    CURL* take() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!idle_.empty()) {
                CURL* h = idle_.back();
                idle_.pop_back();
                return h;
            }
        }
        return libcurl().easyInit();
    }
    void give(CURL* h) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (idle_.size() < kIdle) {
            idle_.push_back(h);
            return;
        }
        libcurl().easyCleanup(h);
    }

private:
    static constexpr std::size_t kIdle = 16;  // a page reader's requests under way (LeafPages)
    std::mutex mutex_;
    std::vector<CURL*> idle_;
};

HandlePool& handles() {
    static HandlePool pool;
    return pool;
}

// What a request is made to: the location errors name, the URL asked, and
// how the server is spoken to.
struct Endpoint {
    std::string location, url;
    std::shared_ptr<const HttpDialect> dialect;  // nullptr: a plain web server
    std::shared_ptr<const TransportOptions> options;
};

// The request's own headers: Range, the version it must be of, and what a
// plain web server is given by the options (a bearer token, headers).
HttpDialect::Headers requestHeaders(const Endpoint& at, const std::string& range,
                                    const std::string& validator) {
    HttpDialect::Headers headers;
    if (at.dialect && !range.empty())
        headers.emplace_back("Range", "bytes=" + range);  // signed: sent as a header
    if (!validator.empty()) {
        const bool isEtag = validator[0] == '"' || validator.rfind("W/", 0) == 0;
        headers.emplace_back(!at.dialect || !at.dialect->ifMatch ? "If-Range"
                             : isEtag                            ? "If-Match"
                                                                 : "If-Unmodified-Since",
                             validator);
    }
    if (at.dialect && at.dialect->authorize) {
        at.dialect->authorize(at.url, headers);
        return headers;
    }
    if (!at.options->bearerToken.empty())
        headers.emplace_back("Authorization", "Bearer " + at.options->bearerToken);
    headers.insert(headers.end(), at.options->headers.begin(), at.options->headers.end());
    return headers;
}

// One GET of `at` for bytes [from, from + length) (length 0: no Range),
// with If-Range (or the dialect's If-Match) when `validator` is set;
// retried on 429, 5xx and dropped connections with backoff. Throws Error
// naming the location for what cannot be retried or when the retries run out.
Response fetch(const Endpoint& at, std::uint64_t from, std::uint64_t length,
               const std::string& validator, BodyTarget target = {}) {
    const std::string& url = at.location;  // what errors name
    const CancelToken* cancel = CancelScope::current();
    const long stallSeconds = std::max(1, at.options->stallSeconds);
    for (int attempt = 1;; ++attempt) {
        if (cancel)
            cancel->throwIfCancelled(url);
        Response r;
        Transfer transfer{&r, length ? length : kMaxDocument, target};
        if (!target.blocks && !target.buffer)
            r.body.reserve(static_cast<std::size_t>(transfer.limit));  // no copies as it grows
        // What may be refused (a signature) is made before a handle is
        // taken from the pool, which a throw would never get back.
        const std::string range =
            length ? std::to_string(from) + "-" + std::to_string(from + length - 1) : "";
        const HttpDialect::Headers sent = requestHeaders(at, range, validator);
        const LibCurl& curl = libcurl();
        CURL* h = handles().take();
        if (!h)
            throw Error::io(url, "cannot start an HTTP request");
        curl.easyReset(h);
        curl.easySetopt(h, CURLOPT_URL, at.url.c_str());
        // Signed requests go where they were signed for, keys as they are
        // ("a/./b" is a key of S3's, not a path to tidy).
        curl.easySetopt(h, CURLOPT_FOLLOWLOCATION, at.dialect ? 0L : 1L);
        curl.easySetopt(h, CURLOPT_PATH_AS_IS, at.dialect ? 1L : 0L);
        curl.easySetopt(h, CURLOPT_MAXREDIRS, kMaxRedirects);
        curl.easySetopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl.easySetopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        curl.easySetopt(h, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
        Watch watch{cancel, std::chrono::seconds(stallSeconds), -1,
                    std::chrono::steady_clock::now(), false};
        curl.easySetopt(h, CURLOPT_NOPROGRESS, 0L);
        curl.easySetopt(h, CURLOPT_XFERINFOFUNCTION, onProgress);
        curl.easySetopt(h, CURLOPT_XFERINFODATA, &watch);
        curl.easySetopt(h, CURLOPT_NOSIGNAL, 1L);
        curl.easySetopt(h, CURLOPT_WRITEFUNCTION, onBody);
        curl.easySetopt(h, CURLOPT_WRITEDATA, &transfer);
        curl.easySetopt(h, CURLOPT_HEADERFUNCTION, onHeader);
        curl.easySetopt(h, CURLOPT_HEADERDATA, &r);
        curl.easySetopt(h, CURLOPT_USERAGENT, "tdstudio");
        if (!at.options->verifyCertificates) {
            curl.easySetopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
            curl.easySetopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (!at.options->caFile.empty())
            curl.easySetopt(h, CURLOPT_CAINFO, at.options->caFile.c_str());
        if (!range.empty() && !at.dialect)
            curl.easySetopt(h, CURLOPT_RANGE, range.c_str());
        curl_slist* headers = nullptr;
        for (const auto& [name, value] : sent)
            // "Name;" is libcurl's way to send a header with no value ("Name:" removes it).
            headers = curl.slistAppend(headers,
                                       (value.empty() ? name + ";" : name + ": " + value).c_str());
        curl.easySetopt(h, CURLOPT_HTTPHEADER, headers);
        ++inFlightCount;
        const CURLcode rc = curl.easyPerform(h);
        --inFlightCount;
        curl.easyGetinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
        char* effective = nullptr;
        curl.easyGetinfo(h, CURLINFO_EFFECTIVE_URL, &effective);
        r.effectiveUrl = effective ? effective : url;
        curl.slistFreeAll(headers);
        handles().give(h);
        ++requestCount;

        if (rc == CURLE_ABORTED_BY_CALLBACK && !watch.stalled)
            throw Cancelled(url);
        if (rc == CURLE_WRITE_ERROR && r.truncatedOnPurpose) {
            if (r.status == 200 && !range.empty())
                return r;  // the caller says what a 200 to a range request means
            throw Error::network(url, "the server sent more than the " +
                                          std::to_string(transfer.limit) + " bytes asked for");
        }
        const bool timedOut = rc == CURLE_OPERATION_TIMEDOUT || watch.stalled;
        const bool transient = timedOut || rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR ||
                               rc == CURLE_SEND_ERROR || rc == CURLE_PARTIAL_FILE ||
                               rc == CURLE_GOT_NOTHING ||
                               (rc == CURLE_OK && (r.status == 429 || r.status >= 500));
        if (transient && attempt < kAttempts) {
            backOff(100 << attempt, cancel, url);
            continue;
        }
        if (rc == CURLE_TOO_MANY_REDIRECTS)
            throw Error::network(url, "more than " + std::to_string(kMaxRedirects) + " redirects");
        if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
            throw Error::untrusted(url, std::string("the server's certificate is not trusted (") +
                                            curl.easyStrerror(rc) + ")");
        if (timedOut)
            throw Error::network(url, "no answer for " + std::to_string(stallSeconds) +
                                          " s (after " + std::to_string(attempt) + " tries)");
        if (rc != CURLE_OK)
            throw Error::network(url,
                                 std::string(curl.easyStrerror(rc)) +
                                     (attempt > 1 ? " (after " + std::to_string(attempt) + " tries)"
                                                  : std::string()));
        if (r.status == 412 && at.dialect && at.dialect->ifMatch)
            throw Error::changed(url, Error::kChangedOnServer);
        // An empty file's first bytes (S3 and MinIO answer 416, "bytes */0").
        if (r.status == 416 && from == 0 &&
            http::trimmed(r.headers.contentRange) == std::string_view("bytes */0")) {
            r.body.clear();
            return r;
        }
        if (r.status >= 300 && at.dialect && at.dialect->failure)
            at.dialect->failure(url, r.status, r.body);
        if (r.status >= 300 && r.status < 400)
            throw Error::network(url, "HTTP " + std::to_string(r.status) +
                                          ": a redirect that was not followed" +
                                          (at.dialect ? " (the bucket is in another region or "
                                                        "at another endpoint?)"
                                                      : ""));
        // Nothing at the URL (404, 410; 403, as a folder without a listing answers).
        if (r.status == 403 || r.status == 404 || r.status == 410)
            throw Error::notFound(url, "HTTP " + reasonOf(r.status));
        if (r.status == 401)
            throw Error::denied(url, "HTTP " + reasonOf(r.status));
        if (r.status >= 400)
            throw Error::network(
                url,
                "HTTP " + reasonOf(r.status) +
                    (transient ? " (after " + std::to_string(attempt) + " tries)" : std::string()));
        return r;
    }
}

class HttpFile final : public ByteSource {
public:
    // From the response to a request for its first bytes.
    HttpFile(Endpoint at, const Response& first, std::shared_ptr<LruBytesCache> cache)
        : at_(std::move(at)), url_(at_.location), cache_(std::move(cache)) {
        if (first.status == 200 && first.truncatedOnPurpose)
            throw Error::network(
                url_,
                "the server does not support range requests (it answers with the whole "
                "file): download a copy and open that");
        if (first.status == 206) {
            const auto range = first.range();
            if (!range || !range->total || range->first != 0)
                throw Error::network(url_,
                                     "the server gave no size or another range (Content-Range: " +
                                         first.headers.contentRange + ")");
            size_ = *range->total;
        } else if (first.status == 416) {  // an empty file (fetch let only that through)
            size_ = 0;
        } else {  // 200: the whole (small) file came, or an empty one
            size_ = first.body.size();
        }
        version_ = first.validator();
        keep(first.body);
    }

    const std::string& name() const override { return url_; }
    std::uint64_t size() const override { return size_; }
    const std::string& version() const override { return version_; }

    void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
        if (offset > size_ || n > size_ - offset)
            throw Error::truncated(url_, "the file ends at " + std::to_string(size_) +
                                             " bytes, before the data asked for (truncated file?)");
        auto* to = static_cast<std::byte*>(out);
        const std::uint64_t end = offset + n;
        std::uint64_t at = offset;
        while (at < end) {
            const std::uint64_t block = at / kBlock;
            if (auto kept = cache_->find(blockKey(block))) {
                const std::uint64_t inBlock = at - block * kBlock;
                const std::uint64_t take = std::min<std::uint64_t>(end - at, kept->size - inBlock);
                std::memcpy(to + (at - offset), kept->data.get() + inBlock, take);
                at += take;
                continue;
            }
            // Fetched now: what this read needs is copied from the answer
            // itself (the cache may not hold a read larger than itself).
            const auto [from, blocks] = fetchFrom(block, end);
            for (const LeafBytes& b : blocks) {
                const std::uint64_t start =
                    from + static_cast<std::uint64_t>(&b - blocks.data()) * kBlock;
                if (start + b.size <= at || start >= end)
                    continue;
                const std::uint64_t take = std::min<std::uint64_t>(end, start + b.size) - at;
                std::memcpy(to + (at - offset), b.data.get() + (at - start), take);
                at += take;
            }
        }
    }

    // A page of a leaf or a streaming reader's chunk: exactly its bytes,
    // straight into its buffer (no blocks rounded around it, no copy, no
    // cache churn). Small reads go through the blocks: neighbours follow.
    void readOnce(std::uint64_t offset, void* out, std::size_t n) const override {
        if (n < kBlock || offset > size_ || n > size_ - offset)
            return readAt(offset, out, n);
        const Response r = fetch(at_, offset, n, version_, {false, static_cast<std::byte*>(out)});
        checkRangeAnswer(r, offset, n);
    }

private:
    std::string blockKey(std::uint64_t block) const {
        return url_ + '\n' + version_ + '\n' + std::to_string(block);
    }

    // Fetches from `block` towards `end` (more when reads are sequential; at
    // most kMaxRequest at once), keeps the blocks, and returns where the
    // answer starts and its bytes.
    std::pair<std::uint64_t, std::vector<LeafBytes>> fetchFrom(std::uint64_t block,
                                                               std::uint64_t end) const {
        const std::uint64_t from = block * kBlock;
        std::uint64_t ahead;
        {
            // Sequential: this fetch starts where the last one ended.
            std::lock_guard<std::mutex> lock(mutex_);
            ahead_ = from == lastFetchEnd_ ? std::min(kMaxAhead, ahead_ * 2) : kBlock;
            ahead = ahead_;
        }
        const std::uint64_t wanted = std::min(std::max(end, from + ahead), from + kMaxRequest);
        const std::uint64_t to = std::min(size_, (wanted + kBlock - 1) / kBlock * kBlock);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            lastFetchEnd_ = to;
        }
        Response r = fetch(at_, from, to - from, version_, {true, nullptr});
        checkRangeAnswer(r, from, to - from);
        if (!r.blocks.empty())  // the last block holds what came of it
            r.blocks.back().size =
                static_cast<std::size_t>(r.received - (r.blocks.size() - 1) * kBlock);
        for (std::size_t i = 0; i < r.blocks.size(); ++i)
            cache_->insert(blockKey(block + i), r.blocks[i]);
        return {from, std::move(r.blocks)};
    }

    // A range answer is the part asked for of this version, whole.
    void checkRangeAnswer(const Response& r, std::uint64_t from, std::uint64_t asked) const {
        if (r.status != 206 || (!r.validator().empty() && r.validator() != version_))
            throw Error::changed(url_, Error::kChangedOnServer);
        const auto range = r.range();
        if (range && range->total && *range->total != size_)
            throw Error::changed(url_, Error::kChangedOnServer);
        if (!range || range->first != from || range->last + 1 != from + asked)
            throw Error::network(
                url_, "the server sent another range than the one asked for (Content-Range: " +
                          r.headers.contentRange + ")");
        if (r.received != asked)
            throw Error::network(url_, "the server sent " + std::to_string(r.received) +
                                           " of the " + std::to_string(asked) + " bytes asked for");
    }

    // Keeps the first answer's bytes (from 0) block by block.
    void keep(const std::string& bytes) const {
        for (std::uint64_t at = 0; at < bytes.size(); at += kBlock) {
            const std::uint64_t n = std::min<std::uint64_t>(kBlock, bytes.size() - at);
            if (n < kBlock && at + n != size_)
                break;  // a partial block that is not the file's last
            LeafBytes block = allocateOwnedBuffer(n);
            std::memcpy(block.data.get(), bytes.data() + at, n);
            cache_->insert(blockKey(at / kBlock), block);
        }
    }

    const Endpoint at_;
    const std::string& url_;  // the location, as errors name it
    std::uint64_t size_ = 0;
    std::string version_;
    std::shared_ptr<LruBytesCache> cache_;
    mutable std::mutex mutex_;
    mutable std::uint64_t lastFetchEnd_ = 0;  // where the last fetch ended
    mutable std::uint64_t ahead_ = kBlock;
};

class HttpTransport final : public Transport {
public:
    HttpTransport(std::string scheme, std::shared_ptr<const HttpDialect> dialect,
                  TransportOptions options)
        : scheme_(std::move(scheme)),
          dialect_(std::move(dialect)),
          options_(std::make_shared<const TransportOptions>(std::move(options))),
          cache_(
              std::make_shared<LruBytesCache>(options_->cacheBytes, LruBytesCache::Cost::Bytes)) {}

    // One transport (and block cache) per set of options in use.
    std::shared_ptr<const Transport> withOptions(const TransportOptions& options,
                                                 const std::string& location) const override {
        if (options == *options_)
            return nullptr;
        for (const auto& [name, value] : options.headers)
            if (!http::isSendableHeader(name, value))
                throw Error::invalid(location, "the header \"" + name +
                                                   "\" cannot be sent: a name of letters, digits "
                                                   "and !#$%&'*+-.^_`|~ and a value without "
                                                   "control characters expected");
        if (!http::isSendableHeader("Authorization", options.bearerToken))
            throw Error::invalid(location,
                                 "the bearer token cannot be sent: it holds a control "
                                 "character");
        std::lock_guard<std::mutex> lock(mutex_);
        auto same = std::find_if(perOptions_.begin(), perOptions_.end(),
                                 [&](const auto& c) { return c.first == options; });
        if (same == perOptions_.end()) {
            if (perOptions_.size() == kKeptOptionSets)
                perOptions_.erase(perOptions_.begin());  // the least recently used, and its cache
            perOptions_.emplace_back(options,
                                     std::make_shared<HttpTransport>(scheme_, dialect_, options));
            same = std::prev(perOptions_.end());
        }
        std::rotate(same, std::next(same), perOptions_.end());  // now the most recently used
        return perOptions_.back().second;
    }

    std::string_view scheme() const override { return scheme_; }

    SourceInfo stat(const std::string& location) const override {
        SourceInfo info;
        std::optional<Error> denied;  // the file's refusal, if its folder is refused too
        if (!location.empty() && location.back() != '/') {
            try {
                const auto file = openNow(location);
                info.kind = SourceInfo::Kind::File;
                info.size = file->size();
                info.version = file->version();
                std::lock_guard<std::mutex> lock(mutex_);
                recent_.insert(recent_.begin(), {location, file});
                if (recent_.size() > kRecent)
                    recent_.pop_back();
                return info;
            } catch (const Error& e) {
                if (e.kind() == ErrorKind::Denied && dialect_ && dialect_->deniedMayBeFolder)
                    denied = e;
                else if (e.kind() != ErrorKind::NotFound)
                    throw;
                info.missing = e.reason() + " (nor a folder with a meta.json)";
            }
        }
        // A directory: one whose meta.json is there.
        try {
            openNow(join(location, "meta.json"));
            info.kind = SourceInfo::Kind::Directory;
        } catch (const Error& e) {
            if (denied)
                throw *denied;
            if (e.kind() != ErrorKind::NotFound)
                throw;
            if (info.missing.empty())
                info.missing = e.reason() + " (no meta.json in this folder)";
        }
        return info;
    }

    // File names go into URLs percent-encoded ("a%2Fb.memmap", a robust
    // key's file, is "a%252Fb.memmap"); '/' still separates folders.
    std::string join(const std::string& location, const std::string& relative) const override {
        if (dialect_ && dialect_->rawNames)
            return Transport::join(location, relative);
        return Transport::join(location, http::percentEncode(relative, /*keepSlash=*/true));
    }

    std::shared_ptr<const ByteSource> open(const std::string& location) const override {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (auto it = recent_.begin(); it != recent_.end(); ++it)
                if (it->first == location) {
                    auto file = it->second;
                    recent_.erase(it);  // once: opening it again asks the server again
                    return file;
                }
        }
        return openNow(location);
    }

private:
    std::shared_ptr<const HttpFile> openNow(const std::string& location) const {
        Endpoint at{location, dialect_ ? dialect_->urlOf(location) : location, dialect_, options_};
        const Response first = fetch(at, 0, kBlock, {});
        if (!first.effectiveUrl.empty() && first.effectiveUrl.back() == '/' &&
            location.back() != '/')
            throw Error::notFound(location, "HTTP 404 Not Found (a folder)");
        return std::make_shared<HttpFile>(std::move(at), first, cache_);
    }

    // stat() then open() of one file is one request: the files stat()
    // opened are kept for the open() that follows (the loader stats a few
    // at a time).
    static constexpr std::size_t kRecent = 16;

    std::string scheme_;
    std::shared_ptr<const HttpDialect> dialect_;  // nullptr: a plain web server
    std::shared_ptr<const TransportOptions> options_;
    std::shared_ptr<LruBytesCache> cache_;
    mutable std::mutex mutex_;
    mutable std::vector<std::pair<std::string, std::shared_ptr<const HttpFile>>> recent_;
    // Transports made for other options, the few used last kept (least
    // recently used first) so that loads with equal options share one block
    // cache, as loads with none do.
    static constexpr std::size_t kKeptOptionSets = 4;
    mutable std::vector<std::pair<TransportOptions, std::shared_ptr<const Transport>>> perOptions_;
};

}  // namespace

std::shared_ptr<const Transport> httpTransport(const std::string& scheme) {
    return std::make_shared<HttpTransport>(scheme, nullptr, TransportOptions{});
}

std::string httpGetDocument(const std::string& location, const std::string& url,
                            const HttpDialect& dialect, const TransportOptions& options) {
    // Borrowed for this one request.
    const Endpoint at{
        location, url, std::shared_ptr<const HttpDialect>(&dialect, [](const HttpDialect*) {}),
        std::shared_ptr<const TransportOptions>(&options, [](const TransportOptions*) {})};
    return fetch(at, 0, 0, {}).body;
}

std::shared_ptr<const Transport> httpTransport(const std::string& scheme, HttpDialect dialect) {
    return std::make_shared<HttpTransport>(
        scheme, std::make_shared<const HttpDialect>(std::move(dialect)), TransportOptions{});
}

HttpCounters httpCounters() {
    return {requestCount.load(), byteCount.load(), inFlightCount.load()};
}

}  // namespace tensordict
