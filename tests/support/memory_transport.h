#pragma once

// Files held in memory and served by range only ("mem://NAME/..."): a
// transport added with one class and one registerTransport() call, as a
// remote one is. Tests serve the same bytes through it that they read from
// disk, so that every format is also read without a mapping.

#include <QByteArray>
#include <QMap>
#include <QMutex>
#include <QString>
#include <atomic>
#include <cstring>
#include <memory>

#include "tensordict/error.h"
#include "tensordict/source.h"

namespace testsupport {

class MemoryTransport final : public tensordict::Transport {
public:
    std::string_view scheme() const override { return "mem"; }

    void add(const QString& location, const QByteArray& bytes) {
        QMutexLocker lock(&mutex_);
        files_[location] = bytes;
        bytesRead_[location] = std::make_shared<std::atomic<std::uint64_t>>(0);
    }

    // The bytes read from `location` since it was added.
    std::uint64_t bytesRead(const QString& location) const {
        QMutexLocker lock(&mutex_);
        const auto it = bytesRead_.find(location);
        return it == bytesRead_.end() ? 0 : it.value()->load();
    }

    tensordict::SourceInfo stat(const std::string& location) const override {
        QMutexLocker lock(&mutex_);
        const QString path = QString::fromStdString(location);
        tensordict::SourceInfo info;
        if (const auto it = files_.find(path); it != files_.end()) {
            info.kind = tensordict::SourceInfo::Kind::File;
            info.size = std::uint64_t(it->size());
            info.version = "1";
        } else {
            const auto next = files_.lowerBound(path + "/");
            if (next != files_.end() && next.key().startsWith(path + "/"))
                info.kind = tensordict::SourceInfo::Kind::Directory;
        }
        return info;
    }

    std::shared_ptr<const tensordict::ByteSource> open(const std::string& location) const override {
        QMutexLocker lock(&mutex_);
        const auto it = files_.find(QString::fromStdString(location));
        if (it == files_.end())
            throw tensordict::Error::notFound(location, "no such file in memory");
        return std::make_shared<Source>(location, *it,
                                        bytesRead_.value(QString::fromStdString(location)));
    }

private:
    // No map(): every read is a ranged one.
    class Source final : public tensordict::ByteSource {
    public:
        Source(std::string name, QByteArray bytes,
               std::shared_ptr<std::atomic<std::uint64_t>> bytesRead)
            : name_(std::move(name)), bytes_(bytes), bytesRead_(std::move(bytesRead)) {}
        const std::string& name() const override { return name_; }
        std::uint64_t size() const override { return std::uint64_t(bytes_.size()); }
        const std::string& version() const override { return version_; }
        void readAt(std::uint64_t offset, void* out, std::size_t n) const override {
            if (offset > size() || n > size() - offset)
                throw tensordict::Error::truncated(name_, "read past the end");
            std::memcpy(out, bytes_.constData() + offset, n);
            *bytesRead_ += n;
        }

    private:
        std::string name_;
        QByteArray bytes_;
        std::shared_ptr<std::atomic<std::uint64_t>> bytesRead_;
        std::string version_ = "1";
    };

    mutable QMutex mutex_;
    QMap<QString, QByteArray> files_;
    QMap<QString, std::shared_ptr<std::atomic<std::uint64_t>>> bytesRead_;
};

}  // namespace testsupport
