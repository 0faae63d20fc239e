#pragma once

#include <QWidget>
#include <memory>

#include "job_tracker.h"
#include "statistics.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class HistogramWidget;

// Statistics of the whole leaf or of the table's current slice, computed off
// the GUI thread in chunks, with a progress bar and a cancel button.
class StatisticsView : public QWidget {
    Q_OBJECT

public:
    explicit StatisticsView(QWidget* parent = nullptr);
    ~StatisticsView() override;

    void setLeaf(tensordict::DType dtype, tensordict::LeafBytes bytes, std::int64_t numel);
    // Statistics of the leaf minus `bytes` (the same shape), after setLeaf().
    void setOther(tensordict::DType dtype, tensordict::LeafBytes bytes);
    void setCurrentSlice(const TensorSlice& slice) { slice_ = slice; }
    void clear();
    void compute();
    void cancel();
    bool isRunning() const { return job_.isBusy(); }
    const Statistics& result() const { return result_; }
    QString field(const QString& name) const;
    HistogramWidget* histogram() const { return histogram_; }

Q_SIGNALS:
    void finished();
    void sourceChanged();  // the leaf's file lost data while it was read

private:
    void showStatistics(const Statistics& s);
    void computed(const Statistics& s);
    void dropComputation();

    tensordict::DType dtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes bytes_;
    tensordict::DType otherDtype_ = tensordict::DType::Float32;
    tensordict::LeafBytes other_;
    std::int64_t numel_ = 0;
    TensorSlice slice_;
    QComboBox* scope_;
    QSpinBox* threads_;
    QPushButton* computeButton_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QFormLayout* form_;
    HistogramWidget* histogram_;
    JobTracker<Statistics> job_{this};
    bool stopping_ = false;  // the running job was asked to stop: it ends "cancelled"
    Statistics result_;
};
