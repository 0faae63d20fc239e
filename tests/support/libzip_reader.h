#pragma once

#include <QString>

// libzip as a third, independent reader of the archives the tests write,
// beside our own reader and Python's zipfile.
namespace testsupport {

struct LibzipReading {
    QString error;          // "" when libzip read the archive cleanly
    int entries = 0;        // entries in the central directory
    int read = 0;           // entries read to their end (libzip checks their CRC-32)
    int structureOnly = 0;  // entries whose method libzip 1.7 cannot decompress (LZMA)
};

// zip_open with ZIP_CHECKCONS (every local header against the central
// directory), then every entry read to its end.
LibzipReading readWithLibzip(const QString& path);

// Every .tdz under `dir` (recursively) that was not checked before, or has
// changed since, read with readWithLibzip(); the current test fails, naming
// each archive and what libzip said, unless all read cleanly. Suites that
// write archives call it after every test function (their cleanup()).
void verifyArchivesWithLibzip(const QString& dir);

}  // namespace testsupport
