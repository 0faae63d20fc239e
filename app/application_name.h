#pragma once

#include <QCoreApplication>

// Where settings live and what --version and the window's title say: the
// same for the console modes and the window.
inline void nameApplication() {
    QCoreApplication::setOrganizationName("tdstudio");
    QCoreApplication::setApplicationName("tdstudio");
    QCoreApplication::setApplicationVersion(TDSTUDIO_VERSION);
}
