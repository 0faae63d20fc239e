// Building blocks: key encoding, JSON in both Python styles, the plain-data
// pickle decoder, and element decoding for every dtype.

#include <QElapsedTimer>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "../../core/src/tree/key_table.h"
#include "../../core/src/tree/node_builder.h"
#include "../../core/src/values/pickle.h"
#include "../../core/src/values/plain_json.h"
#include "../support/json_members_oracle.h"
#include "tensordict/cancel.h"
#include "tensordict/dtype.h"
#include "tensordict/element.h"
#include "tensordict/error.h"
#include "tensordict/keys.h"
#include "tensordict/node.h"
#include "tensordict/tensordict.h"
#include "tensordict/value.h"
#include "tensordict/worker_threads.h"
#include "testsupport.h"

using namespace tensordict;

// The raw bytes of one value, as a leaf holds them.
template <typename T>
std::array<std::byte, sizeof(T)> bytesOf(T v) {
    std::array<std::byte, sizeof v> b;
    std::memcpy(b.data(), &v, sizeof v);
    return b;
}

class UnitsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A wait on a token ends when another thread cancels any copy of it,
    // before or during the wait; an uncancelled token's wait ends at its
    // bound. Many rounds, so that some cancels come while the waiter waits:
    // a lost wakeup there would hold the suite until ctest's timeout.
    void aCancelWakesItsWaiters() {
        QVERIFY(!CancelToken().waitUntilCancelled(std::chrono::milliseconds(1)));
        for (int round = 0; round < 200; ++round) {
            const CancelToken token;
            std::thread canceller([copy = token] { copy.cancel(); });
            QVERIFY(token.waitUntilCancelled(std::chrono::hours(1)));
            canceller.join();
            QVERIFY(token.waitUntilCancelled(std::chrono::milliseconds(0)));
        }
    }

    // Every worker thread runs the program's start hook before any of its
    // work (the app puts each thread's heap in huge pages there); the
    // calling thread, which works too, is not a worker.
    void workerThreadsRunTheStartHookFirst() {
        static std::atomic<int> starts{0};
        static thread_local bool started = false;
        setWorkerThreadStart([] {
            started = true;
            ++starts;
        });
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<int> unstartedWorkers{0}, callerStarted{0};
        parallelFor(64, 4, [&](std::size_t) {
            if (std::this_thread::get_id() == caller)
                callerStarted += started;
            else
                unstartedWorkers += !started;
        });
        setWorkerThreadStart(nullptr);
        QCOMPARE(starts.load(), 3);
        QCOMPARE(unstartedWorkers.load(), 0);
        QCOMPARE(callerStarted.load(), 0);
        parallelFor(8, 2, [](std::size_t) {});
        QCOMPARE(starts.load(), 3);  // none once it is unset
    }

    void encodeKey_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("encoded");
        // core/FORMAT.md 5.1, as the robust_keys fixture shows.
        QTest::newRow("slash") << "a/b"
                               << "a%2Fb";
        QTest::newRow("space") << "weird key!"
                               << "weird%20key!";
        QTest::newRow("percent") << "100%"
                                 << "100%25";
        QTest::newRow("colon") << "C:x"
                               << "C%3Ax";
        QTest::newRow("quote") << "q\"uote"
                               << "q%22uote";
        QTest::newRow("backslash") << "back\\slash"
                                   << "back%5Cslash";
        QTest::newRow("specials") << "star*?<>|"
                                  << "star%2A%3F%3C%3E%7C";
        QTest::newRow("tab") << "tab\tkey"
                             << "tab%09key";
        QTest::newRow("del") << "x\x7f"
                             << "x%7F";
        QTest::newRow("dot inside") << "a.b"
                                    << "a.b";
        QTest::newRow("dot") << "."
                             << "%2E";
        QTest::newRow("dotdot") << ".."
                                << "%2E%2E";
        QTest::newRow("empty") << ""
                               << "%";
        QTest::newRow("unicode") << "ключ"
                                 << "ключ";
    }
    void encodeKey() {
        QFETCH(QString, key);
        QFETCH(QString, encoded);
        QCOMPARE(QString::fromStdString(tensordict::encodeKey(key.toStdString())), encoded);
    }

    void legacyKeySafety() {
        QVERIFY(isSafeLegacyKey("plain", false));
        QVERIFY(isSafeLegacyKey("..", false));
        QVERIFY(!isSafeLegacyKey("..", true));
        QVERIFY(!isSafeLegacyKey("", true));
        QVERIFY(!isSafeLegacyKey("a/b", false));
        QVERIFY(!isSafeLegacyKey("a\\b", false));
        QVERIFY(!isSafeLegacyKey("C:x", false));
    }

    void jsonRoundTripsBothStyles() {
        const Value v = parseJson(
            R"({"b": [1, 2.5, NaN, -Infinity, true, null], "a": "\u00e9\ud83d\ude00"})", "t");
        QCOMPARE(toJson(v, JsonStyle::Python),
                 std::string(
                     R"({"b": [1, 2.5, NaN, -Infinity, true, null], "a": "\u00e9\ud83d\ude00"})"));
        QCOMPARE(toJson(v, JsonStyle::Compact),
                 std::string(
                     "{\"b\":[1,2.5,NaN,-Infinity,true,null],\"a\":\"\xc3\xa9\xf0\x9f\x98\x80\"}"));
        QCOMPARE(parseJson(toJson(v, JsonStyle::Compact), "t"), v);
    }

    // Text that is valid UTF-8 is parsed without validating it again; any
    // other is refused as before, naming the byte where its string went
    // wrong, wherever the bad sequence sits among the ASCII skipped eight
    // bytes at a time.
    void jsonReadsUtf8AndRefusesEveryInvalidSequence() {
        for (const std::string& pad :
             {std::string(), std::string("abcdefg"), std::string(13, 'k')}) {
            const std::string text = "{\"" + pad + "\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" +
                                     pad + "\xf4\x8f\xbf\xbf\"}";
            const Value v = parseJson(text, "t");
            QCOMPARE(v.asObject().at(0).first, pad);
            QCOMPARE(v.asObject().at(0).second.asString(),
                     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" + pad + "\xf4\x8f\xbf\xbf");
            for (const char* bad : {
                     "\xc3",              // a lead byte, then the closing quote
                     "\x80",              // a continuation byte alone
                     "\xc0\xaf",          // an overlong '/'
                     "\xe0\x80\xaf",      // another
                     "\xed\xa0\x80",      // a UTF-16 surrogate
                     "\xf4\x90\x80\x80",  // past U+10FFFF
                     "\xf5\x80\x80\x80",  // a lead byte UTF-8 never uses
                     "\xff",
                 }) {
                const std::string before = "{\"" + pad + "\": \"" + pad;
                const std::string broken = before + bad + "\"}";
                try {
                    parseJson(broken, "t");
                    QFAIL(qPrintable("accepted: " + QByteArray::fromStdString(broken).toHex()));
                } catch (const Error& e) {
                    QCOMPARE(e.kind(), ErrorKind::Corrupt);
                    QCOMPARE(std::string(e.what()), "t: invalid JSON at byte " +
                                                        std::to_string(before.size()) +
                                                        ": Invalid encoding in string.");
                }
            }
        }
        // A sequence cut off by the end of the text.
        QVERIFY_THROWS_EXCEPTION(Error, parseJson("\"\xe2\x82", "t"));
    }

    // The member-by-member reader hands over what parseJson reads, a
    // streamed key's repeats included (the last one counts for a reader that
    // keeps it, as json.loads does); the fuzz target checks this on every input.
    void jsonMembersReadWhatParseJsonReads() {
        for (const char* text :
             {R"({"w": {"a": 1, "b": [1, {"c": 2}], "a": "x"}, "n": 3, "w": 5, "w": {"d": null}})",
              R"({"x": {"w": {"a": 1}}, "w": [{"w": {}}], "w": {}})", R"({})"}) {
            const std::optional<Value> members = oracle::viaMembers(text, "w");
            QVERIFY(members);
            QCOMPARE(*members, parseJson(text, "t"));
        }
        QVERIFY(!oracle::viaMembers(R"([{"w": {"a": 1}}])", "w"));
        QVERIFY(!oracle::viaMembers("7", "w"));
    }

    // JSON's plain subset (values/plain_json.h) reads as the general reader
    // does, and everything outside it is left to the general reader, which
    // reads it or names its error.
    void plainJsonReadsAsTheGeneralReader_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("plain");
        const auto row = [](const char* name, QByteArray text, bool plain) {
            QTest::newRow(name) << text << plain;
        };
        row("object",
            R"({"a": [1, -2, 0, -0, 123456789012345678], "b": {"c": null, "d": true,)"
            R"( "e": false}, "f": "x y", "g": [], "h": {}, "a": 3})",
            true);
        row("white space", " \t\n\r[1 ,\n2]\r\n ", true);
        row("string", R"("s")", true);
        row("minus zero", "-0", true);
        row("63 deep", QByteArray(63, '[') + QByteArray(63, ']'), true);
        row("63 deep objects", QByteArray(R"({"a":)").repeated(62) + "{}" + QByteArray(62, '}'),
            true);
        row("negative 18 digits", "[-999999999999999999]", true);
        row("64 deep", QByteArray(64, '[') + QByteArray(64, ']'), false);
        row("600 deep", QByteArray(600, '[') + QByteArray(600, ']'), false);
        row("fraction", "[1.5]", false);
        row("exponent", "[1e3]", false);
        row("leading zero", "[01]", false);
        row("minus alone", "[-]", false);
        row("minus apart", "[- 1]", false);
        row("19 digits", "1234567890123456789", false);
        row("20 digits", "-12345678901234567890", false);
        row("escape", R"(["a\n"])", false);
        row("utf-8", "[\"\xc3\xa9\"]", false);
        row("delete", "[\"\x7f\"]", false);
        row("control", "[\"\x01\"]", false);
        row("nul", QByteArray("[\"a\0b\"]", 7), false);
        row("NaN", "[NaN]", false);
        row("Infinity", "[-Infinity]", false);
        row("trailing comma", "[1,]", false);
        row("trailing member comma", R"({"a":1,})", false);
        row("no colon", R"({"a" 1})", false);
        row("no comma", "[1 2]", false);
        row("short literal", "[tru]", false);
        row("trailing data", "{} x", false);
        row("closed twice", "[1]]", false);
        row("unclosed", R"({"a": [1)", false);
        row("empty", "", false);
        row("blank", "  ", false);
        row("bare key", "{a: 1}", false);
        row("bom", "\xef\xbb\xbf{}", false);
        // Strings are scanned eight bytes at a time: each byte that ends a
        // plain string, at every place of a long one, in a word and in the tail.
        row("long string", "[\"" + QByteArray(37, 'k') + "\"]", true);
        for (const char stop : {'"', '\\', '\x01', '\x1f', '\x7f', '\x80', '\xff'})
            for (int at = 0; at < 37; ++at) {
                QByteArray text = "[\"" + QByteArray(37, 'k') + "\"]";
                text[2 + at] = stop;
                QTest::addRow("byte 0x%02x at %d", unsigned(static_cast<unsigned char>(stop)), at)
                    << text << false;
            }
        for (const char edge : {' ', '!', '#', '[', ']', '~'}) {
            QByteArray text = "[\"" + QByteArray(37, 'k') + "\"]";
            text[2 + 20] = edge;
            QTest::addRow("plain byte 0x%02x", unsigned(edge)) << text << true;
        }
    }

    void plainJsonReadsAsTheGeneralReader() {
        QFETCH(QByteArray, text);
        QFETCH(bool, plain);
        const std::string_view view(text.constData(), std::size_t(text.size()));
        QCOMPARE(isPlainJson(view), plain);
        const auto read = [&](auto&& parse) {
            try {
                return QString::fromStdString(toJson(parse()));
            } catch (const Error& e) {
                return "refused: " + QString::fromStdString(e.reason());
            }
        };
        const QString general = read([&] { return parseJsonGenerally(view, "t.json"); });
        QCOMPARE(read([&] { return parseJson(view, "t.json"); }), general);
        // The one-pass reader takes exactly the plain texts, and reads them as the general one.
        const std::optional<Value> onePass = readPlainJson(view);
        QCOMPARE(onePass.has_value(), plain);
        if (plain) {
            QVERIFY(!general.startsWith("refused"));
            QCOMPARE(read([&] { return PlainJsonReader(view).value(); }), general);
            QCOMPARE(QString::fromStdString(toJson(*onePass)), general);
        }
    }

    // A handler's failure waits until the text is known to be JSON: a later
    // syntax error is what parseJson would say, and only valid JSON gives
    // the handler's own error. No handler is called after the first failure.
    void jsonMembersReportSyntaxBeforeHandlerErrors() {
        int calls = 0;
        JsonMembers handlers;
        handlers.member = [&](std::string key, Value) {
            ++calls;
            throw Error::corrupt("handler", "refused " + key);
        };
        try {
            parseJsonMembers(R"({"a": 1, "b": 2, "c": })", "x.json", handlers);
            QFAIL("invalid JSON accepted");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.where()), QString("x.json"));
        }
        QCOMPARE(calls, 1);
        try {
            parseJsonMembers(R"({"a": 1, "b": 2})", "x.json", handlers);
            QFAIL("the handler's failure was lost");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.where()), QString("handler"));
            QCOMPARE(QString::fromStdString(e.reason()), QString("refused a"));
        }
        QCOMPARE(calls, 2);
        // The same for a streamed object's entries: after the first refusal
        // nothing more is handed over, its members nor the document's.
        handlers.streamed = "w";
        handlers.entry = [&](std::string key, Value) {
            ++calls;
            throw Error::corrupt("handler", "refused entry " + key);
        };
        try {
            parseJsonMembers(R"({"w": {"a": 1, "b": 2}, "c": 3})", "x.json", handlers);
            QFAIL("the entry handler's failure was lost");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.reason()), QString("refused entry a"));
        }
        QCOMPARE(calls, 3);
    }

    void pythonFloatRepr_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("repr");
        QTest::newRow("integral") << 1.0 << "1.0";
        QTest::newRow("fraction") << 0.1 << "0.1";
        QTest::newRow("small") << 0.0001 << "0.0001";
        QTest::newRow("smaller") << 0.00001 << "1e-05";
        QTest::newRow("big") << 1e16 << "1e+16";
        QTest::newRow("below 1e16") << 123456789012345.0 << "123456789012345.0";
        QTest::newRow("float32 0.3") << double(-0.3f) << "-0.30000001192092896";
    }
    void pythonFloatRepr() {
        QFETCH(double, value);
        QFETCH(QString, repr);
        QCOMPARE(QString::fromStdString(toJson(Value(value))), repr);
    }

    void jsonErrorsNameTheSource() {
        QVERIFY_THROWS_EXCEPTION(Error, parseJson("{\"a\": }", "x/meta.json"));
        try {
            parseJson("{} trailing", "x/meta.json");
            QFAIL("trailing data accepted");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.where()), QString("x/meta.json"));
        }
    }

    void pickleDecodesPlainData() {
        // What tensordict writes for NonTensorData(b"\x00\x01\x02"): {"data": b"\x00\x01\x02"}
        QFile f(testsupport::fixturePath("nontensor_pickle/blob/other.pickle"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const auto v = decodePlainPickle(std::string_view(bytes.constData(), bytes.size()));
        QVERIFY(v);
        QCOMPARE(
            *v,
            Value(Value::Object{{"data", Value(Value::Bytes{std::string("\x00\x01\x02", 3)})}}));
    }

    void pickleFromPythonRoundTrips() {
        // Independent writer: Python's pickle. (Protocol 2 pickles bytes
        // through codecs.encode, a call: that is opaque by design.)
        for (const char* protocol : {"3", "4", "5"}) {
            QString out;
            QVERIFY(testsupport::runPython(
                {"-c", QString("import pickle,sys; sys.stdout.write(pickle.dumps({'s': 'h\u00e9', "
                               "'i': -5, 'big': 2**40, "
                               "'f': 1.25, 'l': [1, (2, 3), None, True], 'd': {'k': b'xy'}}, "
                               "protocol=%1).hex())")
                           .arg(protocol)},
                &out));
            const QByteArray bytes = QByteArray::fromHex(out.toLatin1());
            const auto v = decodePlainPickle(std::string_view(bytes.constData(), bytes.size()));
            QVERIFY2(v, protocol);
            QCOMPARE(
                toJson(*v),
                std::string(
                    R"({"s": "h\u00e9", "i": -5, "big": 1099511627776, "f": 1.25, )"
                    R"("l": [1, [2, 3], null, true], "d": {"k": {"__bytes_hex__": "7879"}}})"));
        }
    }

    void pickleRefusesCode() {
        QString out;
        QVERIFY(testsupport::runPython(
            {"-c",
             "import pickle,sys,collections; "
             "sys.stdout.write(pickle.dumps(collections.OrderedDict(a=1)).hex())"},
            &out));
        const QByteArray bytes = QByteArray::fromHex(out.toLatin1());
        QVERIFY(!decodePlainPickle(std::string_view(bytes.constData(), bytes.size())));
        QVERIFY(!decodePlainPickle("\x80\x04K"));  // truncated, no STOP
    }

    void hostilePicklesAreRefusedNotFatal() {
        std::string deep("\x80\x04", 2);
        deep.append(200000, ']');
        deep.append(199999, 'a');
        deep += '.';
        QVERIFY(!decodePlainPickle(deep));  // would nest 200000 levels
        std::string memo("\x80\x04]", 3);
        memo += '(';
        for (int i = 0; i < 1000; ++i)
            memo += "K\x01";
        memo += 'e';
        memo.append(100000, '\x94');  // memoizing a big list again and again stays cheap
        memo += '.';
        QElapsedTimer timer;
        timer.start();
        const auto list = decodePlainPickle(memo);
        QVERIFY(list && list->asList().size() == 1000);
        QVERIFY(timer.elapsed() < 2000);
        // One tuple three times over, 14 levels deep: 3^14 (4.8 million)
        // values from 45 bytes, refused; a million uses of one shared str
        // (as Python pickles ["cat"] * 1000000) is data.
        std::string shared("\x80\x04K\x01", 4);
        for (int level = 0; level < 14; ++level)
            shared += "22\x87";  // DUP, DUP, TUPLE3
        shared += '.';
        QVERIFY(!decodePlainPickle(shared));
        std::string cats(
            "\x80\x04]\x94(\x8c\x03"
            "cat\x94",
            11);
        for (int i = 1; i < 1000000; ++i)
            cats += "h\x01";  // BINGET 1
        cats += "e.";
        const auto many = decodePlainPickle(cats);
        QVERIFY(many && many->asList().size() == 1000000 &&
                many->asList().back() == Value(std::string("cat")));
    }

    void elementDecoding() {
        QCOMPARE(elementAsDouble(bytesOf(std::uint16_t(0x3C00)).data(), DType::Float16), 1.0);
        QCOMPARE(elementAsDouble(bytesOf(std::uint16_t(0xC000)).data(), DType::BFloat16), -2.0);
        QVERIFY(std::isinf(elementAsDouble(bytesOf(std::uint16_t(0x7C00)).data(), DType::Float16)));
        QCOMPARE(elementAsDouble(bytesOf(std::uint16_t(0x0001)).data(), DType::Float16),
                 std::ldexp(1.0, -24));
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0x7E)).data(), DType::Float8_e4m3fn), 448.0);
        QVERIFY(
            std::isnan(elementAsDouble(bytesOf(std::uint8_t(0x7F)).data(), DType::Float8_e4m3fn)));
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0x7B)).data(), DType::Float8_e5m2), 57344.0);
        QVERIFY(
            std::isinf(elementAsDouble(bytesOf(std::uint8_t(0x7C)).data(), DType::Float8_e5m2)));
        QVERIFY(std::isnan(
            elementAsDouble(bytesOf(std::uint8_t(0x80)).data(), DType::Float8_e5m2fnuz)));
        // E8M0 scales: 2^(e - 127); no zero, no sign; 0xFF is NaN.
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0x7F)).data(), DType::Float8_e8m0fnu), 1.0);
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0x80)).data(), DType::Float8_e8m0fnu), 2.0);
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0x00)).data(), DType::Float8_e8m0fnu),
                 std::ldexp(1.0, -127));
        QCOMPARE(elementAsDouble(bytesOf(std::uint8_t(0xFE)).data(), DType::Float8_e8m0fnu),
                 std::ldexp(1.0, 127));
        QVERIFY(
            std::isnan(elementAsDouble(bytesOf(std::uint8_t(0xFF)).data(), DType::Float8_e8m0fnu)));
        QCOMPARE(dtypeFromString("torch.float8_e8m0fnu"),
                 std::optional<DType>(DType::Float8_e8m0fnu));
        QCOMPARE(formatElement(bytesOf(std::uint64_t(~0ull)).data(), DType::UInt64),
                 std::string("18446744073709551615"));
        const float c[2] = {1.5f, -2.0f};
        QCOMPARE(formatElement(reinterpret_cast<const std::byte*>(c), DType::Complex64),
                 std::string("1.5-2j"));
        QCOMPARE(formatElement(bytesOf(std::uint8_t(1)).data(), DType::Bool), std::string("True"));
        QCOMPARE(formatElement(bytesOf(0.1f).data(), DType::Float32), std::string("0.1"));
        QCOMPARE(formatElement(bytesOf(0.1).data(), DType::Float64), std::string("0.1"));
        QCOMPARE(formatElement(bytesOf(double(0.1f)).data(), DType::Float64),
                 std::string("0.10000000149011612"));
        QCOMPARE(formatElement(bytesOf(3.0f).data(), DType::Float32), std::string("3."));
        QCOMPARE(formatElement(bytesOf(NAN).data(), DType::Float32), std::string("nan"));
        QCOMPARE(formatElement(bytesOf(0.5).data(), DType::Float64, FloatFormat::Scientific, 2),
                 std::string("5.00e-01"));
    }

    // Shortest floats switch notation where Python's repr does, never by
    // which text is shorter (1e10 read "1e+10" beside "10000000000.001"); a
    // notation can be imposed for a column; complex numbers read as Python
    // writes them ("1-2j", where numpy-style parts gave "1.-2.j").
    void shortestFloatsReadAsPythonWritesThem() {
        const auto text = [](double v, Notation n = Notation::Auto) {
            return formatElement(bytesOf(v).data(), DType::Float64, FloatFormat::Shortest, 6, n);
        };
        QCOMPARE(text(1e10), std::string("10000000000."));
        QCOMPARE(text(10000000000.001), std::string("10000000000.001"));
        QCOMPARE(text(1e16), std::string("1e+16"));
        QCOMPARE(text(9999999999999998.0), std::string("9999999999999998."));
        QCOMPARE(text(1e-4), std::string("0.0001"));
        QCOMPARE(text(1.5e-5), std::string("1.5e-05"));
        QCOMPARE(text(-2.5e-300), std::string("-2.5e-300"));
        QCOMPARE(text(0.0), std::string("0."));
        QCOMPARE(text(1e10, Notation::Scientific), std::string("1e+10"));
        QCOMPARE(text(1.5e-5, Notation::Positional), std::string("0.000015"));
        QCOMPARE(text(1.7976931348623157e308, Notation::Positional).size(), std::size_t(310));
        QCOMPARE(formatElement(bytesOf(1e-5f).data(), DType::Float32), std::string("1e-05"));
        QVERIFY(reprIsScientific(1e16) && reprIsScientific(-9e-5));
        QVERIFY(!reprIsScientific(0.0) && !reprIsScientific(NAN) && !reprIsScientific(INFINITY));
        const double z[2] = {1.0, -2.0};
        QCOMPARE(formatElement(reinterpret_cast<const std::byte*>(z), DType::Complex128),
                 std::string("1-2j"));
        const double big[2] = {1e20, 0.5};
        QCOMPARE(formatElement(reinterpret_cast<const std::byte*>(big), DType::Complex128),
                 std::string("1e+20+0.5j"));
        const double odd[2] = {NAN, -INFINITY};
        QCOMPARE(formatElement(reinterpret_cast<const std::byte*>(odd), DType::Complex128),
                 std::string("nan-infj"));
        QCOMPARE(dtypeFromString("torch.float8_e5m2fnuz"),
                 std::optional<DType>(DType::Float8_e5m2fnuz));
        QCOMPARE(itemSize(DType::Complex128), std::size_t(16));
    }
    // Children are found by key through the parent's index at every width,
    // and replacing a child keeps its position.
    void childrenAreFoundByKeyAtAnyWidth() {
        for (const int width : {1, 7, 8, 9, 1000, 5000}) {
            TensorDict td = TensorDict::create();
            Node& root = td.mutableRoot();
            for (int i = 0; i < width; ++i)
                root.addNonTensor("k" + std::to_string(i), Value(std::int64_t(i)));
            QCOMPARE(root.children().size(), std::size_t(width));
            for (int i = 0; i < width; ++i) {
                const Node* found = root.child("k" + std::to_string(i));
                QVERIFY(found);
                QCOMPARE(found->value().asInt(), std::int64_t(i));
            }
            QVERIFY(!root.child("k" + std::to_string(width)));
            QVERIFY(!root.child(""));
            QVERIFY(!root.child("k"));
            // Replaced in place: same position, the new node is the one found.
            const std::string middle = "k" + std::to_string(width / 2);
            root.addTensorDict(middle);
            QCOMPARE(root.children().size(), std::size_t(width));
            QCOMPARE(root.children()[std::size_t(width / 2)]->key(), middle);
            QCOMPARE(root.child(middle)->kind(), NodeKind::TensorDict);
            QCOMPARE(root.child(middle), root.children()[std::size_t(width / 2)]);
        }
    }
    // Children a builder appends are hashed by the first lookup, which may
    // come from several threads at once, and kept indexed by later appends;
    // a repeated key finds its first child.
    void appendedChildrenAreIndexedByTheirFirstLookup() {
        const int width = 3000;
        auto root = NodeBuilder::create(NodeKind::TensorDict, "");
        NodeBuilder builder(*root);
        for (int i = 0; i < width; ++i)  // the last one repeats "k0"
            builder.append(
                NodeBuilder::create(NodeKind::TensorDict, "k" + std::to_string(i % (width - 1))));
        std::atomic<int> wrong{0};
        const auto lookUpAll = [&] {
            for (int i = 0; i < width - 1; ++i)
                if (root->child("k" + std::to_string(i)) != root->children()[std::size_t(i)])
                    ++wrong;
        };
        std::thread other(lookUpAll);
        lookUpAll();
        other.join();
        QCOMPARE(wrong.load(), 0);
        for (int i = width; i < width + 100; ++i)
            builder.append(NodeBuilder::create(NodeKind::TensorDict, "k" + std::to_string(i)));
        for (int i = width; i < width + 100; ++i)
            QCOMPARE(root->child("k" + std::to_string(i)), root->children()[std::size_t(i)]);
        QVERIFY(!root->child("k" + std::to_string(width + 100)));
        QVERIFY(!root->child("k" + std::to_string(width - 1)));
    }

    // A file's version and link target are kept apart from a leaf's storage
    // record and shared by its copies: a change to one copy is its own.
    void storageFactsAreSharedUntilChanged() {
        StorageInfo a;
        QVERIFY(a.version().empty() && a.outsideTarget().empty());
        a.setVersion("v1");
        StorageInfo b = a;
        QCOMPARE(b.version(), std::string("v1"));
        b.setVersion("v2");
        b.setOutsideTarget("/elsewhere");
        QCOMPARE(a.version(), std::string("v1"));
        QVERIFY(a.outsideTarget().empty());
        QCOMPARE(b.version(), std::string("v2"));
        QCOMPARE(b.outsideTarget(), std::string("/elsewhere"));
    }

    // The key table finds each key's first item at every size, grown step by
    // step or reserved up front; an item taken away is never found, and
    // the others still are.
    void keyTableFindsFirstItemsAndSkipsTakenOnes() {
        for (const bool reserved : {false, true})
            for (const std::size_t count : {std::size_t(1), std::size_t(9), std::size_t(3000)}) {
                std::vector<std::unique_ptr<std::string>> items;
                const auto keyAt = [&items](std::size_t at) { return items[at].get(); };
                KeyTable index;
                if (reserved)
                    index.reserve(0, 2 * count, keyAt);
                for (std::size_t i = 0; i < 2 * count; ++i) {  // every key twice
                    items.push_back(std::make_unique<std::string>("k" + std::to_string(i % count)));
                    index.added(i, keyAt);
                }
                for (std::size_t i = 0; i < count; ++i)
                    QCOMPARE(index.find("k" + std::to_string(i), keyAt), i);
                QCOMPARE(index.find("k" + std::to_string(count), keyAt), KeyTable::npos);
                QCOMPARE(index.find("", keyAt), KeyTable::npos);
                // Take every other first item: its key is found no more, even
                // though its repeat is still there (the table kept the first).
                for (std::size_t i = 0; i < count; i += 2)
                    items[i].reset();
                for (std::size_t i = 0; i < count; ++i)
                    QCOMPARE(index.find("k" + std::to_string(i), keyAt),
                             i % 2 ? i : KeyTable::npos);
                index.clear();
                QCOMPARE(index.find("k1", keyAt), KeyTable::npos);
            }
    }
};

QTEST_GUILESS_MAIN(UnitsTest)
#include "tst_units.moc"
