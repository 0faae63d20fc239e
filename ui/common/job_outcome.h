#pragma once

#include <QMetaType>
#include <QString>
#include <exception>

#include "tensordict/cancel.h"
#include "tensordict/error.h"

// How background work that returns no value ended: done, cancelled, or
// failed with a failure that says its kind, where and why. The window
// decides by the state and the kind, never by the words.
struct JobOutcome {
    enum class State { Done, Cancelled, Failed };
    State state = State::Done;
    tensordict::Failure failure;  // when Failed

    static JobOutcome done() { return {}; }
    static JobOutcome cancelled() { return {State::Cancelled, {}}; }
    static JobOutcome failed(tensordict::Failure f) { return {State::Failed, std::move(f)}; }
    static JobOutcome failed(tensordict::ErrorKind kind, const QString& where,
                             const QString& reason) {
        return failed({kind, where.toStdString(), reason.toStdString()});
    }
    // The outcome of the exception being handled: call from a catch block.
    static JobOutcome ofCurrentException() {
        try {
            throw;
        } catch (const tensordict::Cancelled&) {
            return cancelled();
        } catch (const std::exception& e) {
            return failed(tensordict::failureOf(e));
        }
    }

    bool ok() const { return state == State::Done; }
    bool isCancelled() const { return state == State::Cancelled; }
    bool isFailed() const { return state == State::Failed; }
    // "where: reason" of a failure; "" otherwise.
    QString text() const { return isFailed() ? QString::fromStdString(failure.text()) : QString(); }
};
Q_DECLARE_METATYPE(JobOutcome)
