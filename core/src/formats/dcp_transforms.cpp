#include "formats/dcp_transforms.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "formats/file_stores.h"
#include "tensordict/error.h"

namespace tensordict {

namespace {

enum class Transform { Zstd, SwapCase };

// "name[@domain]/version" -> the transform, as ExtensionRegistry.from_descriptor_list
// parses it: the name up to the first '/', then the version's major number.
Transform transformOf(const std::string& descriptor, const std::string& where) {
    const std::size_t slash = descriptor.find('/');
    const std::string name = descriptor.substr(0, slash);
    const std::string version = slash == std::string::npos ? "" : descriptor.substr(slash + 1);
    const std::string major = version.substr(0, version.find('.'));
    const bool known = name == "stream.zstd" || name == "stream.rot13";
    if (!known)
        throw Error::unsupported(where, "the stream was written through the DCP extension \"" +
                                            descriptor + "\", which tdstudio does not know");
    if (major != "1")
        throw Error::unsupported(where, "the stream was written through version " + version +
                                            " of " + name + "; tdstudio reads version 1");
    return name == "stream.zstd" ? Transform::Zstd : Transform::SwapCase;
}

// Bytes held in memory, read as a file named after the stream they came from.
class HeldStream final : public ByteSource {
public:
    HeldStream(std::string name, std::string version, std::vector<std::byte> bytes)
        : name_(std::move(name)), version_(std::move(version)), bytes_(std::move(bytes)) {}

    const std::string& name() const override { return name_; }
    std::uint64_t size() const override { return bytes_.size(); }
    const std::string& version() const override { return version_; }
    void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
        checkWithin(name_, offset, n, bytes_.size());
        if (n != 0)  // an empty stream's data() may be null
            std::memcpy(out, bytes_.data() + offset, n);
    }
    // No map(): a mapping is writable memory of the caller's own, and these
    // bytes are shared by every reader of the stream.

private:
    std::string name_, version_;
    std::vector<std::byte> bytes_;
};

constexpr std::size_t kReadPiece = 1 << 20;

// The first zstd frame of `in` (what zstandard's stream_reader reads),
// into at most `limit` bytes.
std::vector<std::byte> unzstd(const ByteSource& in, std::uint64_t limit) {
    const std::string& where = in.name();
    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!context)
        throw std::bad_alloc();
    std::vector<std::byte> out;
    out.resize(static_cast<std::size_t>(
        std::min<std::uint64_t>(limit, std::max<std::uint64_t>(in.size() * 4, kReadPiece))));
    std::vector<std::byte> piece(
        static_cast<std::size_t>(std::min<std::uint64_t>(in.size(), kReadPiece)));
    std::size_t produced = 0;
    std::uint64_t consumed = 0;
    ZSTD_inBuffer input{piece.data(), 0, 0};
    for (;;) {
        if (input.pos == input.size) {
            if (consumed == in.size())
                throw Error::truncated(where, "the zstd frame ends early, after " +
                                                  std::to_string(produced) + " bytes");
            const std::size_t n = static_cast<std::size_t>(
                std::min<std::uint64_t>(piece.size(), in.size() - consumed));
            in.readOnce(consumed, piece.data(), n);
            consumed += n;
            input = {piece.data(), n, 0};
        }
        if (produced == out.size()) {
            if (out.size() >= limit)
                throw Error::corrupt(where, "the zstd frame holds more than the " +
                                                std::to_string(limit) +
                                                " bytes its chunk can take");
            out.resize(static_cast<std::size_t>(
                std::min<std::uint64_t>(limit, std::uint64_t(out.size()) * 2)));
        }
        ZSTD_outBuffer output{out.data(), out.size(), produced};
        const std::size_t left = ZSTD_decompressStream(context.get(), &output, &input);
        produced = output.pos;
        if (ZSTD_isError(left) && ZSTD_getErrorCode(left) == ZSTD_error_memory_allocation)
            throw std::bad_alloc();  // this machine's state, not the frame's
        if (ZSTD_isError(left))
            throw Error::corrupt(
                where, std::string("the zstd frame is damaged: ") + ZSTD_getErrorName(left));
        if (left == 0) {  // the frame is complete
            out.resize(produced);
            return out;
        }
    }
}

void swapCase(std::vector<std::byte>& bytes) {
    for (std::byte& b : bytes) {
        const auto c = static_cast<unsigned char>(b);
        if (c >= 'A' && c <= 'Z')
            b = static_cast<std::byte>(c + ('a' - 'A'));
        else if (c >= 'a' && c <= 'z')
            b = static_cast<std::byte>(c - ('a' - 'A'));
    }
}

}  // namespace

void checkStreamTransforms(const std::vector<std::string>& descriptors, const std::string& where) {
    for (const std::string& d : descriptors)
        transformOf(d, where);
}

std::shared_ptr<const ByteSource> untransformedStream(std::shared_ptr<const ByteSource> stream,
                                                      const std::vector<std::string>& descriptors,
                                                      std::uint64_t limit) {
    std::shared_ptr<const ByteSource> current = std::move(stream);
    for (const std::string& d : descriptors) {
        std::vector<std::byte> bytes;
        if (transformOf(d, current->name()) == Transform::Zstd) {
            bytes = unzstd(*current, limit);
        } else {
            if (current->size() > limit)
                throw Error::corrupt(current->name(), "the stream holds more than the " +
                                                          std::to_string(limit) +
                                                          " bytes its chunk can take");
            bytes.resize(static_cast<std::size_t>(current->size()));
            current->readOnce(0, bytes.data(), bytes.size());
            swapCase(bytes);
        }
        current =
            std::make_shared<HeldStream>(current->name(), current->version(), std::move(bytes));
    }
    return current;
}

}  // namespace tensordict
