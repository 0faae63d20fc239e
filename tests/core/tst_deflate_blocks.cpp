// The walk of a deflate stream's blocks (core/src/codec/deflate_blocks.h), which
// tells the parallel writer where each libdeflate chunk's final block starts.
// Its answers are held against zlib's own inflate (Z_BLOCK), on streams
// from libdeflate, zlib and ISA-L, and on every damaged form of a few: a
// wrong answer would make archives that do not inflate, so where it cannot
// vouch for a stream it must say so, and never answer otherwise than zlib.

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../../core/src/codec/deflate_blocks.h"
#include "tensordict/error.h"

using namespace tensordict;

namespace {

using Bytes = std::vector<std::uint8_t>;

const std::byte* asBytes(const Bytes& b) {
    return reinterpret_cast<const std::byte*>(b.data());
}

// Inputs of the kinds tensors hold, `n` bytes each.
Bytes sample(int kind, std::size_t n) {
    Bytes v(n);
    std::uint32_t x = 2463534242u + std::uint32_t(kind);
    const auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return x;
    };
    for (std::size_t i = 0; i < n; ++i) {
        switch (kind) {
            case 0:  // zeros
                break;
            case 1:  // noise: stored blocks
                v[i] = std::uint8_t(next());
                break;
            case 2:  // text-like: words from a small alphabet
                v[i] = std::uint8_t("etaoin shrdlu\n"[next() % 14]);
                break;
            case 3:  // image rows: gradients with a little noise
                v[i] = std::uint8_t((i % 192) + (i / 4096) * 3 + (next() & 3));
                break;
            case 4: {  // float32 values in steps
                if (i % 4 == 0) {
                    const float f = float(int(next() % 21) - 10) / 10.0f;
                    std::memcpy(&v[i], &f, std::min<std::size_t>(4, n - i));
                }
                break;
            }
            default:  // runs of bytes of any value
                v[i] = std::uint8_t((i / (1 + next() % 300)) * 37);
        }
    }
    return v;
}

Bytes libdeflateStream(const Bytes& in, int level) {
    libdeflate_compressor* c = libdeflate_alloc_compressor(level);
    Bytes out(libdeflate_deflate_compress_bound(c, in.size()));
    const std::size_t n =
        libdeflate_deflate_compress(c, in.data(), in.size(), out.data(), out.size());
    libdeflate_free_compressor(c);
    out.resize(n);
    return out;
}

// zlib with `strategy`, flushing (`flush`) after every `every` bytes and
// primed with `dictionary` when it is not empty.
Bytes zlibStream(const Bytes& in, int level, int strategy, std::size_t every = 0,
                 int flush = Z_SYNC_FLUSH, const Bytes& dictionary = {}) {
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, strategy) != Z_OK)
        return {};
    if (!dictionary.empty())
        deflateSetDictionary(&z, dictionary.data(), uInt(dictionary.size()));
    Bytes out(deflateBound(&z, uLong(in.size())) + in.size() / 100 + 4096);
    z.next_out = out.data();
    z.avail_out = uInt(out.size());
    std::size_t at = 0;
    do {
        const std::size_t n = every ? std::min(every, in.size() - at) : in.size() - at;
        z.next_in = const_cast<Bytef*>(in.data() + at);
        z.avail_in = uInt(n);
        at += n;
        deflate(&z, at == in.size() ? Z_FINISH : flush);
    } while (at < in.size());
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

Bytes isalStream(const Bytes& in, int level) {
    static thread_local Bytes levelBuffer(ISAL_DEF_LVL3_DEFAULT);
    isal_zstream z;
    isal_deflate_init(&z);
    z.level = std::uint32_t(level);
    z.level_buf = levelBuffer.data();
    z.level_buf_size = level ? std::uint32_t(levelBuffer.size()) : 0;
    Bytes out(in.size() + in.size() / 8 + 65536);
    z.next_in = const_cast<std::uint8_t*>(in.data());
    z.avail_in = std::uint32_t(in.size());
    z.next_out = out.data();
    z.avail_out = std::uint32_t(out.size());
    z.end_of_stream = 1;
    z.flush = NO_FLUSH;
    isal_deflate(&z);
    out.resize(z.total_out);
    return out;
}

// What zlib makes of a stream: nullopt when it rejects it, else its end and
// how many bytes it inflates to.
struct Inflated {
    StreamEnd end;
    std::uint64_t output = 0;
};
std::optional<Inflated> inflatedByZlib(const Bytes& stream) {
    Inflated r;
    try {
        r.end = inflateToStreamEnd(asBytes(stream), stream.size());
    } catch (const Error&) {
        return std::nullopt;
    }
    z_stream z{};
    inflateInit2(&z, -MAX_WBITS);
    Bytes sink(1 << 16);
    z.next_in = const_cast<Bytef*>(stream.data());
    z.avail_in = uInt(stream.size());
    int rc;
    do {
        z.next_out = sink.data();
        z.avail_out = uInt(sink.size());
        rc = inflate(&z, Z_NO_FLUSH);
    } while (rc == Z_OK);
    r.output = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return std::nullopt;
    return r;
}

// Text, then noise, then zeros: libdeflate starts a block at each change.
Bytes changingSample() {
    Bytes v = sample(2, 8000);
    for (int kind : {1, 0}) {
        const Bytes more = sample(kind, kind ? 3000 : 8000);
        v.insert(v.end(), more.begin(), more.end());
    }
    return v;
}

QString describe(const char* maker, int kind, std::size_t size, int level) {
    return QString("%1 level %2, kind %3, %4 bytes").arg(maker).arg(level).arg(kind).arg(size);
}

// Streams written bit by bit from random choices, sound and not: the
// encodings no compressor here makes (a lone one-bit code, 286 literal and
// 30 distance codes, a repeat running from the literal lengths into the
// distance lengths, a distance of exactly the bytes so far, 258 written as
// length 284 with 31 extra), and damaged forms (over-subscribed or
// incomplete codes, no end-of-block code, a repeat with nothing before it,
// a stored block's NLEN wrong, block type 3, the final flag misplaced,
// flipped bits, cuts, a trailing byte).
class StreamWriter {
public:
    explicit StreamWriter(std::uint32_t seed) : random_(seed) {}

    // A stream, and how many bytes it stands for when it is sound.
    Bytes next(bool damage, std::uint64_t& bytes) {
        out_.clear();
        bit_ = 0;
        made_ = 0;
        damage_ = damage;
        const unsigned blocks = 1 + pick(4);
        for (unsigned b = 0; b < blocks; ++b) {
            bool final = b + 1 == blocks;
            if (sometimes(30))
                final = !final;
            put(final, 1);
            const unsigned type = sometimes(40) ? 3 : pick(3);
            if (type == 0)
                storedBlock();
            else if (type == 1)
                codedBlock(fixedLengths(288), fixedLengths(32));
            else if (type == 2)
                dynamicBlock();
            else
                put(3, 2);
        }
        if (sometimes(3))
            for (unsigned k = 1 + pick(4); k > 0 && !out_.empty(); --k) {
                const std::size_t bit = pick(unsigned(out_.size() * 8));
                out_[bit / 8] ^= std::uint8_t(1u << (bit % 8));
            }
        if (sometimes(6))
            out_.resize(pick(unsigned(out_.size() + 1)));
        if (pick(10) == 0)
            out_.push_back(std::uint8_t(pick(256)));
        bytes = made_;
        return out_;
    }

private:
    unsigned pick(unsigned n) { return n ? unsigned(random_() % n) : 0; }
    bool sometimes(unsigned oneIn) { return damage_ && pick(oneIn) == 0; }

    void put(std::uint32_t value, unsigned bits) {
        for (unsigned i = 0; i < bits; ++i, ++bit_) {
            if (bit_ / 8 >= out_.size())
                out_.push_back(0);
            out_[bit_ / 8] |= std::uint8_t(((value >> i) & 1u) << (bit_ % 8));
        }
    }
    void putCode(std::uint32_t code, unsigned length) {  // Huffman codes go first bit first
        for (unsigned i = length; i-- > 0;)
            put((code >> i) & 1u, 1);
    }

    static std::vector<std::uint8_t> fixedLengths(unsigned n) {
        std::vector<std::uint8_t> lengths(n, 5);
        if (n == 288)
            for (unsigned s = 0; s < n; ++s)
                lengths[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
        return lengths;
    }
    static std::vector<std::uint32_t> canonical(const std::vector<std::uint8_t>& lengths) {
        unsigned count[16] = {};
        for (std::uint8_t l : lengths)
            ++count[l];
        count[0] = 0;
        std::uint32_t next[16] = {}, code = 0;
        for (unsigned len = 1; len < 16; ++len)
            next[len] = code = (code + count[len - 1]) << 1;
        std::vector<std::uint32_t> codes(lengths.size());
        for (std::size_t s = 0; s < lengths.size(); ++s)
            if (lengths[s])
                codes[s] = next[lengths[s]]++;
        return codes;
    }
    // Lengths of `used` codes among n symbols, at most `longest` bits: a
    // complete code (a random binary tree's leaves), unless damaged.
    std::vector<std::uint8_t> randomLengths(unsigned n, unsigned used, unsigned longest) {
        std::vector<std::uint8_t> lengths(n, 0);
        std::vector<unsigned> leaves = {used == 1 ? 1u : 0u};
        while (leaves.size() < used) {
            const unsigned i = pick(unsigned(leaves.size()));
            if (leaves[i] >= longest) {
                if (std::all_of(leaves.begin(), leaves.end(),
                                [&](unsigned l) { return l >= longest; }))
                    break;
                continue;
            }
            leaves.push_back(++leaves[i]);
        }
        if (sometimes(8) && leaves.size() > 1)
            leaves.pop_back();  // incomplete
        if (sometimes(8))
            leaves.push_back(1 + pick(longest));  // over-subscribed
        std::vector<unsigned> symbols(n);
        for (unsigned s = 0; s < n; ++s)
            symbols[s] = s;
        std::shuffle(symbols.begin(), symbols.end(), random_);
        for (std::size_t i = 0; i < leaves.size() && i < n; ++i)
            lengths[symbols[i]] = std::uint8_t(leaves[i]);
        return lengths;
    }

    void storedBlock() {
        put(0, 2);
        bit_ = (bit_ + 7) / 8 * 8;
        const unsigned length = pick(4) ? pick(50) : pick(0x10000);
        unsigned complement = ~length & 0xFFFFu;
        if (sometimes(20))
            complement ^= 1u << pick(16);
        put(length, 16);
        put(complement, 16);
        for (unsigned i = 0; i < length; ++i)
            put(pick(256), 8);
        made_ += length;
    }

    void dynamicBlock() {
        unsigned literals = 257 + pick(30), distances = 1 + pick(30);
        if (pick(8) == 0)
            literals = 286, distances = 30;
        if (sometimes(10))
            literals = 257 + pick(32), distances = 1 + pick(32);  // up to 288 and 32
        std::vector<std::uint8_t> lengths =
            randomLengths(literals, pick(3) == 0 ? 1 + pick(4) : 1 + pick(literals), 15);
        if (!lengths[256] && !sometimes(10)) {  // an end-of-block code
            const auto with =
                std::find_if(lengths.begin(), lengths.end(), [](std::uint8_t l) { return l != 0; });
            std::swap(*with, lengths[256]);
        }
        const std::vector<std::uint8_t> distanceLengths =
            randomLengths(distances, pick(5) == 0 ? pick(2) : 1 + pick(distances), 15);
        std::vector<std::uint8_t> all = lengths;
        all.insert(all.end(), distanceLengths.begin(), distanceLengths.end());
        // The lengths as code-length symbols: runs of zeros (17, 18) and
        // repeats of the length before (16), across the two lists.
        std::vector<std::pair<unsigned, unsigned>> symbols;  // symbol, extra bits' value
        if (sometimes(20))
            symbols.push_back({16, 0});  // a repeat with nothing before it
        for (std::size_t i = 0; i < all.size();) {
            std::size_t run = 1;
            while (i + run < all.size() && all[i + run] == all[i])
                ++run;
            if (all[i] == 0 && run >= 3 && pick(3)) {
                const unsigned r = unsigned(std::min<std::size_t>(run, run >= 11 ? 138 : 10));
                symbols.push_back(r >= 11 ? std::make_pair(18u, r - 11)
                                          : std::make_pair(17u, r - 3));
                i += r;
            } else if (i > 0 && all[i] == all[i - 1] && run >= 3 && pick(3)) {
                const unsigned r = unsigned(std::min<std::size_t>(run, 6));
                symbols.push_back({16, r - 3});
                i += r;
            } else {
                symbols.push_back({all[i], 0});
                ++i;
            }
        }
        std::vector<std::uint8_t> used(19, 0);
        for (const auto& [symbol, extra] : symbols)
            used[symbol] = 1;
        std::vector<unsigned> usedSymbols;
        for (unsigned s = 0; s < 19; ++s)
            if (used[s])
                usedSymbols.push_back(s);
        // A complete code for the code-length symbols used (two at least).
        std::vector<std::uint8_t> codeLengths(19, 0);
        const unsigned n = std::max<unsigned>(2, unsigned(usedSymbols.size()));
        std::vector<std::uint8_t> shape = randomLengths(n, n, 7);
        shape.erase(std::remove(shape.begin(), shape.end(), 0), shape.end());
        for (std::size_t k = 0; k < usedSymbols.size() && k < shape.size(); ++k)
            codeLengths[usedSymbols[k]] = shape[k];
        if (usedSymbols.size() == 1)
            codeLengths[usedSymbols[0] == 0 ? 1 : 0] = codeLengths[usedSymbols[0]] = 1;
        static constexpr std::uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                    11, 4,  12, 3, 13, 2, 14, 1, 15};
        unsigned sent = 19;
        while (sent > 4 && codeLengths[kOrder[sent - 1]] == 0)
            --sent;
        put(2, 2);
        put(literals - 257, 5);
        put(distances - 1, 5);
        put(sent - 4, 4);
        for (unsigned i = 0; i < sent; ++i)
            put(codeLengths[kOrder[i]], 3);
        const std::vector<std::uint32_t> codes = canonical(codeLengths);
        for (const auto& [symbol, extra] : symbols) {
            putCode(codes[symbol], codeLengths[symbol]);
            put(extra, symbol == 16 ? 2 : symbol == 17 ? 3 : symbol == 18 ? 7 : 0);
        }
        codedBlock(lengths, distanceLengths);
    }

    // Literals and matches of the codes given, then the end-of-block code.
    void codedBlock(const std::vector<std::uint8_t>& lengths,
                    const std::vector<std::uint8_t>& distanceLengths) {
        const std::vector<std::uint32_t> codes = canonical(lengths),
                                         distanceCodes = canonical(distanceLengths);
        std::vector<unsigned> coded, codedDistances;
        for (unsigned s = 0; s < lengths.size(); ++s)
            if (lengths[s] && s != 256 && (s < 286 || damage_))
                coded.push_back(s);
        for (unsigned d = 0; d < distanceLengths.size(); ++d)
            if (distanceLengths[d] && (d < 30 || damage_))
                codedDistances.push_back(d);
        static constexpr std::uint16_t kBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                    15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                    67, 83, 99, 115, 131, 163, 195, 227, 258};
        static constexpr std::uint8_t kExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                    2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
        static constexpr std::uint16_t kDistanceBase[30] = {
            1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
            193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
        static constexpr std::uint8_t kDistanceExtra[30] = {0, 0, 0,  0,  1,  1,  2,  2,  3,  3,
                                                            4, 4, 5,  5,  6,  6,  7,  7,  8,  8,
                                                            9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
        const unsigned count = pick(3) == 0 ? pick(3) : pick(400);
        for (unsigned k = 0; k < count && !coded.empty(); ++k) {
            const unsigned s = coded[pick(unsigned(coded.size()))];
            if (s < 256) {
                putCode(codes[s], lengths[s]);
                ++made_;
                continue;
            }
            // A length: with a distance no farther back than the bytes so
            // far (exactly that, sometimes), unless damaged.
            std::vector<unsigned> reachable;
            for (unsigned d : codedDistances)
                if (d >= 30 || kDistanceBase[d] <= made_ || sometimes(20))
                    reachable.push_back(d);
            if (reachable.empty() || s >= 286)
                continue;
            const unsigned d = reachable[pick(unsigned(reachable.size()))];
            putCode(codes[s], lengths[s]);
            const unsigned extra = pick(1u << kExtra[s - 257]);
            put(extra, kExtra[s - 257]);
            putCode(distanceCodes[d], distanceLengths[d]);
            if (d < 30) {
                const std::uint64_t room = made_ >= kDistanceBase[d] ? made_ - kDistanceBase[d] : 0;
                const unsigned most = unsigned(std::min<std::uint64_t>(
                    (1u << kDistanceExtra[d]) - 1, damage_ ? 0xFFFFu : room));
                put(pick(2) ? most : pick(most + 1), kDistanceExtra[d]);
            }
            made_ += kBase[s - 257] + extra;
        }
        if (lengths.size() > 256 && lengths[256])
            putCode(codes[256], lengths[256]);
    }

    std::mt19937 random_;
    Bytes out_;
    std::uint64_t bit_ = 0, made_ = 0;
    bool damage_ = false;
};

}  // namespace

class TestDeflateBlocks : public QObject {
    Q_OBJECT

    // The walk answers for `stream` of `output` bytes, and as zlib does.
    static void expectWalked(const Bytes& stream, std::uint64_t output, const QString& what) {
        const std::optional<Inflated> reference = inflatedByZlib(stream);
        QVERIFY2(reference, qPrintable(what + ": zlib rejects the stream"));
        QCOMPARE(reference->output, output);
        const std::optional<StreamEnd> walked =
            walkToStreamEnd(asBytes(stream), stream.size(), output);
        QVERIFY2(walked, qPrintable(what + ": the walk declined"));
        QVERIFY2(*walked == reference->end, qPrintable(QString("%1: walk %2/%3, zlib %4/%5")
                                                           .arg(what)
                                                           .arg(walked->finalBlock)
                                                           .arg(walked->end)
                                                           .arg(reference->end.finalBlock)
                                                           .arg(reference->end.end)));
    }

    // Whatever the walk answers for `stream`, zlib answers the same for it.
    // Sets `declined` when the walk gave no answer.
    static void expectNoWrongAnswer(const Bytes& stream, std::uint64_t output, const QString& what,
                                    bool& declined) {
        const std::optional<StreamEnd> walked =
            walkToStreamEnd(asBytes(stream), stream.size(), output);
        declined = !walked;
        if (!walked)
            return;
        const std::optional<Inflated> reference = inflatedByZlib(stream);
        QVERIFY2(reference, qPrintable(what + ": walked a stream zlib rejects"));
        QVERIFY2(
            reference->output == output,
            qPrintable(
                what +
                QString(": walked %1 bytes, zlib inflates %2").arg(output).arg(reference->output)));
        QVERIFY2(*walked == reference->end, qPrintable(what + ": walked to another end"));
    }

private Q_SLOTS:
    void walksEveryLibdeflateLevel() {
        const std::size_t sizes[] = {0, 1, 257, 10000, 70001, 300007, (1u << 20) + 17};
        for (int kind = 0; kind < 6; ++kind)
            for (std::size_t size : sizes) {
                const Bytes in = sample(kind, size);
                for (int level = 0; level <= 12; ++level) {
                    if (level > 9 && size > 300007)
                        continue;  // minutes, and the same blocks as smaller inputs
                    expectWalked(libdeflateStream(in, level), size,
                                 describe("libdeflate", kind, size, level));
                }
            }
    }

    // Stored, fixed and dynamic blocks, empty stored blocks from flushes,
    // distances up to 32 KiB back.
    void walksZlibAndIsalStreams() {
        const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE, Z_FILTERED};
        for (int kind = 0; kind < 6; ++kind) {
            const Bytes in = sample(kind, 200003);
            for (int level = 0; level <= 9; ++level)
                for (int strategy : strategies) {
                    const QString what = describe("zlib", kind, in.size(), level) +
                                         QString(", strategy %1").arg(strategy);
                    expectWalked(zlibStream(in, level, strategy), in.size(), what);
                    expectWalked(zlibStream(in, level, strategy, 4099, Z_SYNC_FLUSH), in.size(),
                                 what + ", sync flushes");
                    expectWalked(zlibStream(in, level, strategy, 65536, Z_FULL_FLUSH), in.size(),
                                 what + ", full flushes");
                }
            for (int level = 0; level <= 3; ++level)
                expectWalked(isalStream(in, level), in.size(),
                             describe("ISA-L", kind, in.size(), level));
        }
        expectWalked(zlibStream({}, 6, Z_DEFAULT_STRATEGY), 0, "zlib, empty input");
    }

    // Streams of every block type and code shape, sound and damaged: the
    // walk answers for every one zlib inflates (the count zlib gives) and
    // answers nothing zlib does not.
    void answersAsZlibOnWrittenStreams() {
        StreamWriter writer(20261205);
        int sound = 0;
        for (int i = 0; i < 20000; ++i) {
            std::uint64_t bytes = 0;
            const Bytes stream = writer.next(i % 2 == 1, bytes);
            const std::optional<Inflated> reference = inflatedByZlib(stream);
            const std::uint64_t asked = reference ? reference->output : bytes;
            const std::optional<StreamEnd> walked =
                walkToStreamEnd(asBytes(stream), stream.size(), asked);
            const QString what = QString("stream %1 (%2 bytes)").arg(i).arg(stream.size());
            if (reference) {
                ++sound;
                QVERIFY2(walked, qPrintable(what + ": the walk declined what zlib inflates"));
                QVERIFY2(*walked == reference->end, qPrintable(what + ": another end"));
            } else {
                QVERIFY2(!walked, qPrintable(what + ": walked a stream zlib rejects"));
            }
        }
        QVERIFY2(sound > 5000 && sound < 17500, qPrintable(QString::number(sound)));
    }

    void declinesAnotherOutputSize() {
        const Bytes in = sample(2, 50000);
        const Bytes stream = libdeflateStream(in, 6);
        QVERIFY(walkToStreamEnd(asBytes(stream), stream.size(), in.size()));
        QVERIFY(!walkToStreamEnd(asBytes(stream), stream.size(), in.size() - 1));
        QVERIFY(!walkToStreamEnd(asBytes(stream), stream.size(), in.size() + 1));
        QVERIFY(!walkToStreamEnd(asBytes(stream), stream.size() - 1, in.size()));
        const Bytes stored = libdeflateStream(in, 0);
        QVERIFY(walkToStreamEnd(asBytes(stored), stored.size(), in.size()));
        QVERIFY(!walkToStreamEnd(asBytes(stored), stored.size() - 1, in.size()));
        QVERIFY(!walkToStreamEnd(asBytes(stored), stored.size(), in.size() + 1));
    }

    // A block cut short whose missing bits, read as zeros, decode to bytes
    // again and again (fuzz_deflate_blocks found it): the walk stops at the
    // stream's end, not after as many bytes as asked for (here: never).
    void stopsAtTheEndOfACutStream() {
        const Bytes stream = {0x5c, 0x95, 0x49, 0x8e, 0x1c, 0x31, 0x0c, 0x04, 0xbf, 0x52,
                              0x4f, 0x10, 0x77, 0x0a, 0xf5, 0x1a, 0x03, 0xf6, 0x61, 0x8e,
                              0xf6, 0x60, 0xfe, 0x3f, 0x4c, 0xf9, 0x60, 0xa5, 0x8f, 0x12,
                              0xd8, 0x62, 0x04, 0x97, 0xae, 0xf5, 0x7c, 0xfe, 0xfe, 0xfa,
                              0xf1, 0xe7, 0x8d, 0x2c, 0x62, 0x04, 0x97, 0xae, 0x38, 0x23,
                              0xed, 0x03, 0x6c, 0x3b, 0x80, 0xcb, 0x13, 0x00};
        QVERIFY(!inflatedByZlib(stream));
        QVERIFY(!walkToStreamEnd(asBytes(stream), stream.size(), UINT64_MAX));
    }

    // A primed stream refers to bytes before its start: not one of ours.
    void declinesDistancesBeforeTheStart() {
        const Bytes dictionary = sample(2, 32768), in = sample(2, 20000);
        const Bytes stream = zlibStream(in, 6, Z_DEFAULT_STRATEGY, 0, Z_NO_FLUSH, dictionary);
        QVERIFY(!walkToStreamEnd(asBytes(stream), stream.size(), in.size()));
        const Bytes unprimed = zlibStream(in, 6, Z_DEFAULT_STRATEGY);
        QVERIFY(walkToStreamEnd(asBytes(unprimed), unprimed.size(), in.size()));
    }

    // Every one-bit change and every cut of a few streams (dynamic, fixed,
    // stored, several blocks): the walk declines, or answers as zlib does.
    void neverAnswersOtherwiseThanZlib_data() {
        QTest::addColumn<int>("maker");
        QTest::newRow("libdeflate 6, dynamic blocks") << 0;
        QTest::newRow("zlib fixed blocks, sync flushes") << 1;
        QTest::newRow("zlib stored blocks") << 2;
        QTest::newRow("zlib dynamic blocks, sync flushes") << 3;
    }
    void neverAnswersOtherwiseThanZlib() {
        QFETCH(int, maker);
        Bytes in, stream;
        switch (maker) {
            case 0:
                in = changingSample();
                stream = libdeflateStream(in, 6);
                break;
            case 1:
                in = sample(2, 2000);
                stream = zlibStream(in, 6, Z_FIXED, 700);
                break;
            case 2:
                in = sample(1, 300);
                stream = zlibStream(in, 0, Z_DEFAULT_STRATEGY, 100);
                break;
            default:
                in = changingSample();
                stream = zlibStream(in, 6, Z_DEFAULT_STRATEGY, 2500);
        }
        const std::optional<StreamEnd> whole =
            walkToStreamEnd(asBytes(stream), stream.size(), in.size());
        QVERIFY(whole);
        if (maker != 2)  // more than one block
            QVERIFY2(whole->finalBlock > 0, qPrintable(QString("%1 bytes").arg(stream.size())));
        int declined = 0;
        for (std::size_t bit = 0; bit < stream.size() * 8; ++bit) {
            Bytes damaged = stream;
            damaged[bit / 8] ^= std::uint8_t(1u << (bit % 8));
            bool walkDeclined = false;
            expectNoWrongAnswer(damaged, in.size(), QString("bit %1 changed").arg(bit),
                                walkDeclined);
            if (QTest::currentTestFailed())
                return;
            declined += walkDeclined;
        }
        for (std::size_t cut = 0; cut < stream.size(); ++cut) {
            const Bytes shorter(stream.begin(), stream.begin() + std::ptrdiff_t(cut));
            QVERIFY2(!walkToStreamEnd(asBytes(shorter), shorter.size(), in.size()),
                     qPrintable(QString("cut to %1 bytes").arg(cut)));
        }
        QVERIFY(declined > 0);
    }
};

QTEST_GUILESS_MAIN(TestDeflateBlocks)
#include "tst_deflate_blocks.moc"
