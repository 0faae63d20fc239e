// The walk of a deflate stream's blocks (core/src/deflate_blocks.h), which
// tells the parallel writer where each libdeflate chunk's final block starts.
// Its answers are held against zlib's own inflate (Z_BLOCK), on streams
// from libdeflate, zlib and ISA-L, and on every damaged form of a few: a
// wrong answer would make archives that do not inflate, so where it cannot
// vouch for a stream it must say so, and never answer otherwise than zlib.

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>
#include <QtTest>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../../core/src/deflate_blocks.h"
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
