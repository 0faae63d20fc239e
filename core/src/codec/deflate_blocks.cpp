#include "codec/deflate_blocks.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "base/at_exit.h"
#include "tensordict/error.h"

namespace tensordict {
namespace {

// The stream's bits, least significant first as deflate packs them. Past
// the end it reads zeros, so a walk that overruns is seen by its position.
class BitReader {
public:
    BitReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    // At least 56 bits in the buffer.
    void refill() {
        if (count_ >= 56)
            return;
        if (size_ - std::min(next_, size_) >= 8) {
            std::uint64_t word;
            std::memcpy(&word, data_ + next_, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            word = __builtin_bswap64(word);
#endif
            // Bits above count_ already hold the true next bits (or zeros),
            // so OR-ing the same bytes in again at the same place is harmless.
            bits_ |= word << count_;
            const unsigned bytes = (63 - count_) >> 3;
            next_ += bytes;
            count_ += bytes * 8;
            return;
        }
        while (count_ <= 56) {
            const std::uint64_t byte = next_ < size_ ? data_[next_] : 0;
            bits_ |= byte << count_;
            ++next_;
            count_ += 8;
        }
    }
    std::uint32_t peek(unsigned n) const {
        return static_cast<std::uint32_t>(bits_ & ((std::uint64_t(1) << n) - 1));
    }
    void skip(unsigned n) {
        bits_ >>= n;
        count_ -= n;
    }
    std::uint32_t take(unsigned n) {
        const std::uint32_t v = peek(n);
        skip(n);
        return v;
    }
    std::uint64_t bitsBuffered() const {
        return bits_;
    }
    std::uint64_t position() const {
        return std::uint64_t(next_) * 8 - count_;
    }
    bool overran() const {
        return position() > std::uint64_t(size_) * 8;
    }
    void alignToByte() {
        skip(count_ & 7);
    }
    // Moves to byte `at` of the stream (past a stored block's bytes).
    void seekByte(std::uint64_t at) {
        next_ = static_cast<std::size_t>(std::min<std::uint64_t>(at, size_ + 1));
        bits_ = 0;
        count_ = 0;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t next_ = 0;  // the next byte to load (may pass size_: zeros)
    std::uint64_t bits_ = 0;
    unsigned count_ = 0;
};

constexpr unsigned kMaxCodeLength = 15;
constexpr unsigned kPrimaryBits = 10;

// What a table entry's bits above its code length say. A code longer than
// kPrimaryBits, a symbol the walk must look at (the end of a block, one
// that is not valid) and bits that start no code are kSlow: the careful
// step decodes them bit by bit.
constexpr std::uint32_t kMatch = 1u << 24, kSlow = 1u << 25;

// A canonical Huffman code: a table of the next kPrimaryBits bits to an
// entry (the code's length in the low 4 bits, what the caller's `entryOf`
// said of its symbol above them), and the counts by length to decode any
// code bit by bit as puff does.
class HuffmanCode {
public:
    // False for a set of lengths zlib's inflate would refuse: over-subscribed,
    // or incomplete other than one code of one bit (for code lengths, never).
    template <typename EntryOf>
    bool build(const std::uint8_t* lengths, unsigned count, bool mayBeIncomplete, EntryOf entryOf) {
        count_.fill(0);
        for (unsigned s = 0; s < count; ++s)
            ++count_[lengths[s]];
        unsigned longest = 0;
        for (unsigned len = 1; len <= kMaxCodeLength; ++len)
            if (count_[len])
                longest = len;
        std::fill(std::begin(table_), std::end(table_), kSlow);
        if (longest == 0)  // no codes: valid, but nothing decodes
            return true;
        int left = 1;
        for (unsigned len = 1; len <= kMaxCodeLength; ++len) {
            left = left * 2 - count_[len];
            if (left < 0)
                return false;
        }
        if (left > 0 && (!mayBeIncomplete || longest != 1))
            return false;
        // Symbols in canonical order: by length, then by value.
        std::array<std::uint16_t, kMaxCodeLength + 2> offset{};
        for (unsigned len = 1; len <= kMaxCodeLength; ++len)
            offset[len + 1] = static_cast<std::uint16_t>(offset[len] + count_[len]);
        for (unsigned s = 0; s < count; ++s)
            if (lengths[s])
                symbols_[offset[lengths[s]]++] = static_cast<std::uint16_t>(s);
        // Each short code's bit-reversed value, repeated for every value of
        // the bits after it.
        std::uint32_t code = 0;
        unsigned index = 0;
        for (unsigned len = 1; len <= std::min(longest, kPrimaryBits); ++len) {
            for (unsigned k = 0; k < count_[len]; ++k, ++code, ++index) {
                std::uint32_t reversed = 0;
                for (unsigned b = 0; b < len; ++b)
                    reversed |= ((code >> b) & 1u) << (len - 1 - b);
                const std::uint32_t entry = entryOf(symbols_[index]);
                // A symbol marked slow keeps length 0: the careful step reads it.
                const std::uint32_t value = entry & kSlow ? kSlow : entry | len;
                for (std::uint32_t r = reversed; r < (1u << kPrimaryBits); r += 1u << len)
                    table_[r] = value;
            }
            code <<= 1;
        }
        return true;
    }

    std::uint32_t entry(std::uint64_t bits) const {
        return table_[bits & ((1u << kPrimaryBits) - 1)];
    }

    // The next symbol, -1 for none, for a table whose entries are the
    // symbols (symbol << 4); the reader must hold 15 bits.
    int decodeSymbol(BitReader& in) const {
        const std::uint32_t e = entry(in.bitsBuffered());
        if (e & kSlow)
            return decodeBitByBit(in);
        in.skip(e & 15);
        return static_cast<int>(e >> 4);
    }

    // The next symbol, -1 for none, from the counts: any code of any table.
    int decodeBitByBit(BitReader& in) const {
        const std::uint64_t bits = in.bitsBuffered();
        int code = 0, first = 0, index = 0;
        for (unsigned len = 1; len <= kMaxCodeLength; ++len) {
            code |= static_cast<int>((bits >> (len - 1)) & 1);
            const int n = count_[len];
            if (code - n < first) {
                in.skip(len);
                return symbols_[index + (code - first)];
            }
            index += n;
            first = (first + n) << 1;
            code <<= 1;
        }
        return -1;
    }

private:
    std::array<std::uint16_t, kMaxCodeLength + 1> count_{};
    std::array<std::uint16_t, 288> symbols_{};
    std::uint32_t table_[1u << kPrimaryBits] = {};
};

constexpr std::uint16_t kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                           15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                           67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::uint16_t kDistanceBase[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::uint8_t kDistanceExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// A literal/length symbol as a step takes it: a literal is one byte; a
// length has extra bits and a base and is followed by a distance.
std::uint32_t literalEntry(std::uint16_t symbol) {
    if (symbol < 256)
        return 1u << 8;
    if (symbol == 256 || symbol >= 257 + 29)
        return kSlow;
    return std::uint32_t(kLengthExtra[symbol - 257]) << 4 |
           std::uint32_t(kLengthBase[symbol - 257]) << 8 | kMatch;
}

std::uint32_t distanceEntry(std::uint16_t symbol) {
    if (symbol >= 30)
        return kSlow;
    return std::uint32_t(kDistanceExtra[symbol]) << 4 | std::uint32_t(kDistanceBase[symbol]) << 8;
}

std::uint32_t symbolEntry(std::uint16_t symbol) {
    return std::uint32_t(symbol) << 4;
}

struct FixedCodes {
    HuffmanCode literals, distances;
    FixedCodes() {
        std::uint8_t lengths[288];
        std::fill(lengths, lengths + 144, 8);
        std::fill(lengths + 144, lengths + 256, 9);
        std::fill(lengths + 256, lengths + 280, 7);
        std::fill(lengths + 280, lengths + 288, 8);
        literals.build(lengths, 288, false, literalEntry);
        std::fill(lengths, lengths + 32, 5);
        distances.build(lengths, 32, false, distanceEntry);
    }
};

// A dynamic block's header: the code of its code lengths, then its literal
// and distance codes from the lengths that code gives.
bool readDynamicCodes(BitReader& in, HuffmanCode& lengthCode, HuffmanCode& literals,
                      HuffmanCode& distances) {
    static constexpr std::uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                11, 4,  12, 3, 13, 2, 14, 1, 15};
    in.refill();
    const unsigned literalCount = in.take(5) + 257, distanceCount = in.take(5) + 1,
                   lengthCodes = in.take(4) + 4;
    if (literalCount > 286 || distanceCount > 30)
        return false;
    std::uint8_t codeLengths[19] = {};
    for (unsigned i = 0; i < lengthCodes; ++i) {
        in.refill();
        codeLengths[kOrder[i]] = static_cast<std::uint8_t>(in.take(3));
    }
    if (!lengthCode.build(codeLengths, 19, false, symbolEntry))
        return false;
    std::uint8_t lengths[286 + 30];
    const unsigned total = literalCount + distanceCount;
    for (unsigned i = 0; i < total;) {
        in.refill();
        const int symbol = lengthCode.decodeSymbol(in);
        if (symbol < 0)
            return false;
        if (symbol < 16) {
            lengths[i++] = static_cast<std::uint8_t>(symbol);
            continue;
        }
        std::uint8_t value = 0;
        unsigned repeat;
        if (symbol == 16) {
            if (i == 0)
                return false;
            value = lengths[i - 1];
            repeat = 3 + in.take(2);
        } else if (symbol == 17) {
            repeat = 3 + in.take(3);
        } else {
            repeat = 11 + in.take(7);
        }
        if (i + repeat > total)
            return false;
        std::fill(lengths + i, lengths + i + repeat, value);
        i += repeat;
    }
    if (lengths[256] == 0)  // no end-of-block code
        return false;
    return literals.build(lengths, literalCount, true, literalEntry) &&
           distances.build(lengths + literalCount, distanceCount, true, distanceEntry);
}

// One symbol (and its distance) the careful way: long codes, the end of
// the block, invalid symbols. Returns 1 at the end of the block, -1 for a
// stream that is not valid, 0 otherwise.
int slowStep(BitReader& in, const HuffmanCode& literals, const HuffmanCode& distances,
             std::uint64_t& made) {
    const int symbol = literals.decodeBitByBit(in);
    if (symbol < 0)
        return -1;
    if (symbol < 256) {
        ++made;
        return 0;
    }
    if (symbol == 256)
        return 1;
    const unsigned l = static_cast<unsigned>(symbol - 257);
    if (l >= 29)
        return -1;
    const std::uint64_t length = kLengthBase[l] + in.take(kLengthExtra[l]);
    const int d = distances.decodeBitByBit(in);
    if (d < 0 || d >= 30)
        return -1;
    const std::uint64_t distance = kDistanceBase[d] + in.take(kDistanceExtra[d]);
    if (distance > made)  // before the stream's start: it is unprimed
        return -1;
    made += length;
    return 0;
}

// Counts one Huffman-coded block's bytes into `produced`; false for a code,
// length or distance that is not valid, more than `output` bytes, or a
// block that runs past the stream's end.
//
// A step decodes a literal or a length and, from the bits after it, a
// distance, then keeps the distance only for a length: no branch on which
// it was, which on image-like data the processor guesses wrong about as
// often as right. It works on copies of the reader and the count: through
// references the compiler must assume they alias and keep both in memory.
bool walkCodedBlock(BitReader& reader, const HuffmanCode& literals, const HuffmanCode& distances,
                    std::uint64_t& produced, std::uint64_t output) {
    BitReader in = reader;
    std::uint64_t made = produced, tooFar = 0;
    int state = 0;
    for (;;) {
        in.refill();  // 56 bits: the longest match takes 15 + 5 + 15 + 13 = 48
        const std::uint64_t bits = in.bitsBuffered();
        const std::uint32_t e = literals.entry(bits);
        const std::uint32_t length = e & 15, extra = (e >> 4) & 15;
        const std::uint64_t afterLength = bits >> length;
        const std::uint64_t bytes = ((e >> 8) & 0x1FF) + (afterLength & ((1u << extra) - 1));
        const std::uint64_t afterExtra = afterLength >> extra;
        const std::uint32_t d = distances.entry(afterExtra);
        const std::uint32_t match = 0u - ((e >> 24) & 1);  // all ones for a length
        if ((e | (d & match)) & kSlow) {
            state = slowStep(in, literals, distances, made);
            if (state != 0)
                break;
        } else {
            const std::uint32_t dLength = d & 15, dExtra = (d >> 4) & 15;
            const std::uint64_t distance =
                ((d >> 8) & 0xFFFF) + ((afterExtra >> dLength) & ((1u << dExtra) - 1));
            tooFar |= (distance > made) & match;  // before the unprimed stream's start
            made += bytes;
            in.skip(length + extra + ((dLength + dExtra) & match));
        }
        // Past the end it reads zeros, which may decode on and on.
        if (made > output || in.overran())
            break;
    }
    reader = in;
    produced = made;
    return state == 1 && tooFar == 0;
}

}  // namespace

std::optional<StreamEnd> walkToStreamEnd(const std::byte* stream, std::size_t size,
                                         std::uint64_t output) {
    static const FixedCodes fixed;
    BitReader in(reinterpret_cast<const std::uint8_t*>(stream), size);
    // A dynamic block's three codes, about 14 KB: on the heap, made at the
    // first such block (the walk may run on a small stack).
    std::unique_ptr<std::array<HuffmanCode, 3>> dynamic;
    std::uint64_t produced = 0;
    for (;;) {
        const std::uint64_t blockStart = in.position();
        if (blockStart >= std::uint64_t(size) * 8)
            return std::nullopt;
        in.refill();
        const bool final = in.take(1) != 0;
        const unsigned type = in.take(2);
        if (type == 0) {  // stored: LEN, NLEN on a byte boundary, then LEN bytes
            in.alignToByte();
            in.refill();
            const std::uint32_t length = in.take(16), complement = in.take(16);
            if (length != (~complement & 0xFFFFu))
                return std::nullopt;
            produced += length;
            if (produced > output)
                return std::nullopt;
            in.seekByte(in.position() / 8 + length);
        } else if (type == 1) {
            if (!walkCodedBlock(in, fixed.literals, fixed.distances, produced, output))
                return std::nullopt;
        } else if (type == 2) {
            if (!dynamic)
                dynamic = std::make_unique<std::array<HuffmanCode, 3>>();
            auto& [lengthCode, literals, distances] = *dynamic;
            if (!readDynamicCodes(in, lengthCode, literals, distances) ||
                !walkCodedBlock(in, literals, distances, produced, output))
                return std::nullopt;
        } else {
            return std::nullopt;
        }
        if (in.overran())
            return std::nullopt;
        if (final) {
            if (produced != output)
                return std::nullopt;
            return StreamEnd{blockStart, in.position()};
        }
    }
}

StreamEnd inflateToStreamEnd(const std::byte* stream, std::size_t size) {
    thread_local std::vector<Bytef> sink(1u << 20);  // the output is not needed
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        throw Error::corrupt("", "cannot start inflate");
    AtExit end{[&z] { inflateEnd(&z); }};
    z.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(stream));
    z.avail_in = static_cast<uInt>(size);
    std::uint64_t blockStart = 0;
    for (;;) {
        z.next_out = sink.data();
        z.avail_out = static_cast<uInt>(sink.size());
        const int rc = inflate(&z, Z_BLOCK);
        if (rc != Z_OK && rc != Z_STREAM_END)
            throw Error::corrupt("", "deflate made a stream inflate rejects");
        if (z.data_type & 128) {  // between blocks: here is where one ended
            const std::uint64_t at = std::uint64_t(z.total_in) * 8 - (z.data_type & 7);
            if (z.data_type & 64)  // the one that ended was the final block
                return {blockStart, at};
            blockStart = at;
        } else if (z.avail_in == 0 && z.avail_out != 0) {
            throw Error::corrupt("", "deflate made a stream that ends early");
        }
    }
}

}  // namespace tensordict
