#include "slice_export.h"

#include <QFile>
#include <QImage>
#include <QSaveFile>
#include <QTextStream>
#include <algorithm>
#include <cstring>

#include "png_encoder.h"
#include "tensordict/guarded_read.h"
#include "tensordict/leaf_pages.h"

using tensordict::DType;

namespace slice_export {
namespace {

std::vector<std::int64_t> sliceShape(const TensorSlice& s) {
    std::vector<std::int64_t> shape;
    if (s.rowDim >= 0)
        shape.push_back(s.rows());
    if (s.colDim >= 0)
        shape.push_back(s.cols());
    return shape;
}

// numpy descr of what we write for `dtype`, and the bytes per element written.
std::pair<const char*, std::size_t> npyType(DType dtype) {
    switch (dtype) {
        case DType::Bool:
            return {"|b1", 1};
        case DType::UInt8:
            return {"|u1", 1};
        case DType::Int8:
            return {"|i1", 1};
        case DType::Int16:
            return {"<i2", 2};
        case DType::Int32:
            return {"<i4", 4};
        case DType::Int64:
            return {"<i8", 8};
        case DType::UInt16:
            return {"<u2", 2};
        case DType::UInt32:
            return {"<u4", 4};
        case DType::UInt64:
            return {"<u8", 8};
        case DType::Float16:
            return {"<f2", 2};
        case DType::Float64:
            return {"<f8", 8};
        case DType::Complex64:
        case DType::Complex32:
            return {"<c8", 8};
        case DType::Complex128:
            return {"<c16", 16};
        default:
            return {"<f4", 4};  // float32, bfloat16, float8
    }
}

// Element (r, c) of the slice, copied through the guarded path.
bool copyElement(std::byte* out, const tensordict::LeafBytes& bytes, const TensorSlice& slice,
                 std::int64_t r, std::int64_t c, std::size_t item) {
    return tensordict::tryGuardedCopy(
        out, bytes.data.get() + static_cast<std::size_t>(slice.elementIndex(r, c)) * item, item);
}

// Reports progress every `step` rows (about 64 Ki elements) and at the end.
class Reporter {
public:
    Reporter(const Progress& progress, const TensorSlice& slice)
        : progress_(progress),
          rows_(slice.rows()),
          step_(std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(1, slice.cols()))) {}
    // False when the export is to stop.
    bool after(std::int64_t row) {
        const std::int64_t done = row + 1;
        if (!progress_ || (done % step_ != 0 && done != rows_))
            return true;
        return progress_(done, rows_);
    }

private:
    const Progress& progress_;
    std::int64_t rows_, step_;
};

}  // namespace

JobOutcome fileFailure(const QString& path, const QFileDevice& file) {
    return JobOutcome::failed(tensordict::ErrorKind::Io, path, file.errorString());
}

// The leaf's file lost pages under the export.
JobOutcome sourceChanged(const QString& path) {
    return JobOutcome::failed(tensordict::Error::changed(path.toStdString()).failure());
}

JobOutcome writeCsv(const QString& path, DType dtype, const tensordict::LeafBytes& bytes,
                    const TensorSlice& slice, const Progress& progress) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return fileFailure(path, file);
    QTextStream out(&file);
    const std::size_t item = tensordict::itemSize(dtype);
    Reporter reporter(progress, slice);
    for (std::int64_t r = 0; r < slice.rows(); ++r) {
        for (std::int64_t c = 0; c < slice.cols(); ++c) {
            if (c)
                out << ',';
            std::byte element[16];
            if (!copyElement(element, bytes, slice, r, c, item))
                return sourceChanged(path);  // QSaveFile discards the partial file
            out << QString::fromStdString(tensordict::formatElement(element, dtype));
        }
        out << '\n';
        if (!reporter.after(r))
            return JobOutcome::cancelled();  // QSaveFile discards the partial file
    }
    out.flush();
    return file.commit() ? JobOutcome::done() : fileFailure(path, file);
}

JobOutcome writeNpy(const QString& path, DType dtype, const tensordict::LeafBytes& bytes,
                    const TensorSlice& slice, const Progress& progress) {
    const auto [descr, outItem] = npyType(dtype);
    QStringList dims;
    for (auto d : sliceShape(slice))
        dims << QString::number(d);
    const QString shape = dims.size() == 1 ? dims.front() + "," : dims.join(", ");
    QByteArray header = QString("{'descr': '%1', 'fortran_order': False, 'shape': (%2), }")
                            .arg(descr, shape)
                            .toLatin1();
    // magic(6) + version(2) + length(2) + header, padded with spaces to a multiple of 64, ending in
    // \n
    const int total = 10 + header.size() + 1;
    header.append(QByteArray((64 - total % 64) % 64, ' '));
    header.append('\n');
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fileFailure(path, file);
    file.write("\x93NUMPY\x01\x00", 8);
    const quint16 len = static_cast<quint16>(header.size());
    const char lenBytes[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
    file.write(lenBytes, 2);
    file.write(header);
    const std::size_t item = tensordict::itemSize(dtype);
    QByteArray buffer;
    buffer.reserve(1 << 20);
    Reporter reporter(progress, slice);
    for (std::int64_t r = 0; r < slice.rows(); ++r) {
        for (std::int64_t c = 0; c < slice.cols(); ++c) {
            std::byte source[16];
            if (!copyElement(source, bytes, slice, r, c, item))
                return sourceChanged(path);  // QSaveFile discards the partial file
            const std::byte* p = source;
            char element[16];
            if (outItem == item) {
                std::memcpy(element, p, item);
            } else if (outItem == 8 && dtype == DType::Complex32) {
                const auto z = tensordict::elementAsComplex(p, dtype);
                const float parts[2] = {static_cast<float>(z.re), static_cast<float>(z.im)};
                std::memcpy(element, parts, 8);
            } else {
                const float v = static_cast<float>(tensordict::elementAsDouble(p, dtype));
                std::memcpy(element, &v, 4);
            }
            buffer.append(element, static_cast<qsizetype>(outItem));
        }
        if (buffer.size() > (1 << 20)) {
            file.write(buffer);
            buffer.clear();
        }
        if (!reporter.after(r))
            return JobOutcome::cancelled();  // QSaveFile discards the partial file
    }
    file.write(buffer);
    return file.commit() ? JobOutcome::done() : fileFailure(path, file);
}

JobOutcome writePng(const QString& path, const QImage& image, PngEffort effort) {
    if (image.isNull())
        return JobOutcome::failed(tensordict::ErrorKind::Invalid, path,
                                  QObject::tr("there is no image to export"));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fileFailure(path, file);
    // A window's screenshot: libdeflate's level 1 in memory (png_encoder.h).
    // Other images, of any size or depth, stream through Qt's libpng writer.
    if (effort == PngEffort::Fast && png_encoder::keepsEveryBit(image.format())) {
        const QByteArray png = png_encoder::encode(image, 1);
        if (png.isEmpty())
            return JobOutcome::failed(tensordict::ErrorKind::Io, path,
                                      QObject::tr("cannot encode a PNG image"));
        if (file.write(png) != png.size())
            return fileFailure(path, file);
    } else if (!image.save(&file, "PNG"))  // QSaveFile discards the partial file
        return JobOutcome::failed(tensordict::ErrorKind::Io, path,
                                  file.error() != QFileDevice::NoError
                                      ? file.errorString()
                                      : QObject::tr("cannot encode a PNG image"));
    return file.commit() ? JobOutcome::done() : fileFailure(path, file);
}

}  // namespace slice_export

SliceExportJob::SliceExportJob(Format format, QString path, tensordict::DType dtype,
                               tensordict::LeafBytes bytes, TensorSlice slice, QObject* parent)
    : QObject(parent),
      format_(format),
      path_(std::move(path)),
      dtype_(dtype),
      bytes_(std::move(bytes)),
      slice_(std::move(slice)) {}

SliceExportJob::~SliceExportJob() {
    cancel_.cancel();
}

void SliceExportJob::setWorkerHook(std::function<void(std::int64_t, std::int64_t)> hook) {
    hook_ = std::move(hook);
}

void SliceExportJob::start() {
    // The worker owns copies of everything it reads; the mapping stays alive through bytes_.
    tracker_.stream<RowsDone>(
        [format = format_, path = path_, dtype = dtype_, bytes = bytes_, slice = slice_,
         hook = hook_](const tensordict::CancelToken& cancel, const JobSend<RowsDone>& send) {
            int reported = -1;  // permille: at most a thousand posted reports however long
            const slice_export::Progress progress = [&](std::int64_t done, std::int64_t rows) {
                if (hook)
                    hook(done, rows);
                const int permille = rows > 0 ? static_cast<int>(done * 1000 / rows) : 1000;
                if (permille != reported) {
                    reported = permille;
                    send({done, rows});
                }
                return !cancel.isCancelled();
            };
            // A leaf read page by page: the slice's pages filled first, held while written.
            const SliceHold held = requireSpan(bytes, dtype, slice.span(), &cancel);
            if (held.cancelled)
                return JobOutcome::cancelled();
            if (held.failure)
                return JobOutcome::failed(*held.failure);
            return format == Format::Csv
                       ? slice_export::writeCsv(path, dtype, bytes, slice, progress)
                       : slice_export::writeNpy(path, dtype, bytes, slice, progress);
        },
        [this](RowsDone rows) { Q_EMIT progressed(rows.done, rows.rows); },
        [this](const JobOutcome& outcome) { Q_EMIT finished(outcome); }, cancel_);
}
