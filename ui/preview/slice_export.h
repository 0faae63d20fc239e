#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <memory>

#include "job_outcome.h"
#include "job_tracker.h"
#include "tensor_slice.h"
#include "tensordict/cancel.h"
#include "tensordict/element.h"
#include "tensordict/node.h"

class QImage;

// Writing the current slice of a leaf to files other tools read.
namespace slice_export {

// Called with the rows written so far, every few thousand rows and at the
// end; returning false cancels the export (nothing is left at `path`).
using Progress = std::function<bool(std::int64_t rowsDone, std::int64_t rows)>;

// Comma-separated values, one line per row.
JobOutcome writeCsv(const QString& path, tensordict::DType dtype,
                    const tensordict::LeafBytes& bytes, const TensorSlice& slice,
                    const Progress& progress = {});
// NumPy's .npy (format 1.0): shape (rows, cols) of the slice. Dtypes numpy
// lacks are widened: bfloat16, float8 -> float32, complex32 -> complex64.
JobOutcome writeNpy(const QString& path, tensordict::DType dtype,
                    const tensordict::LeafBytes& bytes, const TensorSlice& slice,
                    const Progress& progress = {});
// A PNG image, written atomically: through a QSaveFile, so that a failure
// leaves no partial file and an existing one as it was. A failure names
// the path. Every PNG export of tdstudio goes through it. `effort`:
// lossless either way; a window's screenshot is taken fast (png_encoder.h),
// other images are written as small as Qt's libpng writer makes them.
enum class PngEffort { Smallest, Fast };
JobOutcome writePng(const QString& path, const QImage& image,
                    PngEffort effort = PngEffort::Smallest);

}  // namespace slice_export

// One slice export, run through JobTracker: progress and the outcome
// arrive on the GUI thread as signals, Cancel stops it, and a partial file
// is never left behind (QSaveFile discards it).
class SliceExportJob : public QObject {
    Q_OBJECT

public:
    enum class Format { Csv, Npy };
    SliceExportJob(Format format, QString path, tensordict::DType dtype,
                   tensordict::LeafBytes bytes, TensorSlice slice, QObject* parent = nullptr);
    ~SliceExportJob() override;  // cancels, and the tracker waits for the worker

    // For tests: runs on the worker at every progress report, before the
    // cancel check, so that a test can hold the export mid-way.
    void setWorkerHook(std::function<void(std::int64_t rowsDone, std::int64_t rows)> hook);
    void start();
    void cancel() { cancel_.cancel(); }
    bool isRunning() const { return tracker_.isBusy(); }
    QString path() const { return path_; }
    std::int64_t rows() const { return slice_.rows(); }

Q_SIGNALS:
    void progressed(std::int64_t rowsDone, std::int64_t rows);
    // Done, cancelled, or failed with its kind, where and why.
    void finished(const JobOutcome& outcome);

private:
    struct RowsDone {
        std::int64_t done = 0, rows = 0;
    };
    Format format_;
    QString path_;
    tensordict::DType dtype_;
    tensordict::LeafBytes bytes_;
    TensorSlice slice_;
    std::function<void(std::int64_t, std::int64_t)> hook_;
    tensordict::CancelToken cancel_;
    JobTracker<JobOutcome> tracker_{this, JobDelivery::Every};  // last: joined first
};
