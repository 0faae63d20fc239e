#include "libzip_reader.h"

#include <zip.h>

#include <QDirIterator>
#include <QFileInfo>
#include <QSet>
#include <QTest>
#include <memory>
#include <vector>

namespace testsupport {

LibzipReading readWithLibzip(const QString& path) {
    LibzipReading out;
    int code = 0;
    zip_t* archive =
        zip_open(QFile::encodeName(path).constData(), ZIP_CHECKCONS | ZIP_RDONLY, &code);
    if (!archive) {
        zip_error_t error;
        zip_error_init_with_code(&error, code);
        out.error = QString("zip_open: %1").arg(zip_error_strerror(&error));
        zip_error_fini(&error);
        return out;
    }
    const std::unique_ptr<zip_t, void (*)(zip_t*)> close(archive, [](zip_t* z) { zip_discard(z); });
    const zip_int64_t count = zip_get_num_entries(archive, 0);
    out.entries = static_cast<int>(count);
    std::vector<char> buffer(1 << 20);
    for (zip_int64_t i = 0; i < count; ++i) {
        zip_stat_t st;
        if (zip_stat_index(archive, i, 0, &st) != 0) {
            out.error = QString("entry %1: zip_stat_index: %2").arg(i).arg(zip_strerror(archive));
            return out;
        }
        if (!zip_compression_method_supported(st.comp_method, 0)) {
            ++out.structureOnly;
            continue;
        }
        zip_file_t* file = zip_fopen_index(archive, i, 0);
        if (!file) {
            out.error = QString("%1: zip_fopen_index: %2").arg(st.name, zip_strerror(archive));
            return out;
        }
        zip_uint64_t total = 0;
        zip_int64_t n = 0;
        while ((n = zip_fread(file, buffer.data(), buffer.size())) > 0)
            total += static_cast<zip_uint64_t>(n);
        const QString fileError = n < 0 ? QString(zip_file_strerror(file)) : QString();
        zip_fclose(file);
        if (n < 0) {  // a CRC-32 mismatch or corrupt compressed data
            out.error = QString("%1: zip_fread: %2").arg(st.name, fileError);
            return out;
        }
        if (total != st.size) {
            out.error = QString("%1: read %2 of %3 bytes").arg(st.name).arg(total).arg(st.size);
            return out;
        }
        ++out.read;
    }
    return out;
}

void verifyArchivesWithLibzip(const QString& dir) {
    static QSet<QString> checked;  // "path size mtime" of archives read before
    QString problems;
    QDirIterator it(dir, {"*.tdz"}, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QFileInfo file(it.next());
        const QString identity = QString("%1 %2 %3")
                                     .arg(file.absoluteFilePath())
                                     .arg(file.size())
                                     .arg(file.lastModified().toMSecsSinceEpoch());
        if (checked.contains(identity))
            continue;
        const LibzipReading reading = readWithLibzip(file.absoluteFilePath());
        if (!reading.error.isEmpty())
            problems += file.absoluteFilePath() + ": " + reading.error + "\n";
        else
            checked.insert(identity);
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems));
}

}  // namespace testsupport
