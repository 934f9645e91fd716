import Foundation
import QuestBakKit
import QuestBakTestSupport
import XCTest

#if SystemArchive
    import CArchive
#endif

/// questbak's own tar (`TarFormat`, `SwiftTarWriter`, `SwiftTarReader`) and codecs: the tar it
/// writes is libarchive's byte for byte, GNU tar reads it, it reads what GNU tar writes in POSIX
/// format, and hostile tar gets a typed error. Runs in both builds (`make test` runs it in the
/// portable one too); the comparisons with libarchive only where it is linked.
final class TarFormatTests: XCTestCase {
    static let modificationTime = 1_700_000_000

    /// Names questbak writes, and names that need ustar's prefix field or a pax `path` record.
    static let paths: [String] = [
        "manifest.json", "entities/Routine.jsonl", String(repeating: "n", count: 99), String(repeating: "n", count: 100),
        String(repeating: "d", count: 60) + "/" + String(repeating: "f", count: 80),
        String(repeating: "d", count: 150) + "/" + String(repeating: "f", count: 100),
        String(repeating: "d", count: 156) + "/" + String(repeating: "f", count: 20),
        "files/external/" + String(repeating: "x", count: 120),
        (1...40).map { "dir\($0)" }.joined(separator: "/") + "/file.bin",
        String(repeating: "p", count: 300),
        "trailing/slash/",
    ]

    struct Member {
        var path: String
        var data: Data
    }

    static func members() -> [Member] {
        paths.enumerated().map { index, path in
            Member(path: path, data: Data((0..<(index * 397 % 1500)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }))
        }
    }

    /// The members a file system can hold as files: no folder names, no name over 255 bytes.
    static func extractable() -> [Member] {
        members().filter { member in !member.path.hasSuffix("/") && member.path.split(separator: "/").allSatisfy { $0.utf8.count <= 255 } }
    }

    static func write(_ members: [Member], to url: URL, compression: ArchiveCompression) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        let writer = try SwiftTarWriter(fileDescriptor: descriptor, compression: compression, modificationTime: modificationTime)
        for member in members { try writer.addFile(path: member.path, data: member.data) }
        try writer.finish()
    }

    static func read(_ url: URL) throws -> [(entry: TarEntry, data: Data)] {
        let descriptor = open(url.path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        let reader = try SwiftTarReader(fileDescriptor: descriptor)
        var result: [(TarEntry, Data)] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let entry = try reader.nextEntry() {
            var data = Data()
            while true {
                let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                if count == 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
            result.append((entry, data))
        }
        return result
    }

    // MARK: The same bytes as libarchive

    #if SystemArchive
        func testHeadersAreLibarchivesByteForByte() throws {
            let sizes: [Int64] = [0, 1, 511, 512, 1 << 20, (1 << 33) - 1, 1 << 33, (1 << 36) - 1, 1 << 36, 1 << 45]
            // libarchive 3.7 moved where a time gets a pax record from 2038 to 2^33 - 1;
            // TarFormat keeps 3.6's (Debian 12's), so later times are compared with that one only.
            let before2038 = [Self.modificationTime, 0, 0x7FFF_FFFE, -1]
            let times = before2038 + (archive_version_number() < 3_007_000 ? [0x7FFF_FFFF, 0x1_FFFF_FFFF, 1 << 36] : [])
            var compared = 0
            // ASCII only: questbak's member names are (plain identifiers, safe file names), and for
            // others libarchive's pax record depends on the process's locale (hdrcharset).
            for path in Self.paths + ["", ".", "/", "a/."] {
                for size in sizes {
                    for time in times where size == 0 || time == Self.modificationTime {
                        let expected = try LibArchiveTarWriter.header(path: path, size: size, modificationTime: time)
                        let actual = TarFormat.header(path: path, size: size, modificationTime: time)
                        XCTAssertEqual(actual, expected, "\(path) \(size) \(time): \(Self.firstDifference(actual, expected))")
                        compared += 1
                    }
                }
            }
            XCTAssertGreaterThan(compared, 100)
        }

        func testAWholeTarStreamIsLibarchivesByteForByte() throws {
            let directory = try TemporaryTestDirectory()
            let ours = directory.path("swift.tar")
            let theirs = directory.path("libarchive.tar")
            try Self.write(Self.members(), to: ours, compression: .none)
            let descriptor = open(theirs.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let writer = try LibArchiveTarWriter(fileDescriptor: descriptor, compression: .none, modificationTime: Self.modificationTime)
            for member in Self.members() { try writer.addFile(path: member.path, data: member.data) }
            try writer.finish()
            close(descriptor)
            let actual = try Data(contentsOf: ours)
            let expected = try Data(contentsOf: theirs)
            XCTAssertGreaterThan(expected.count, 20 * 512)
            XCTAssertEqual(actual, expected, Self.firstDifference(actual, expected))
        }

        /// What libarchive writes (bsdtar's writer), compressed as one stream by its own filters,
        /// is read by questbak's own reader.
        func testTheSwiftReaderReadsWhatLibarchiveWrites() throws {
            for compression in ArchiveCompression.allCases {
                let directory = try TemporaryTestDirectory()
                let url = directory.path("libarchive.tar")
                let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                let writer = try LibArchiveTarWriter(
                    fileDescriptor: descriptor, compression: compression, modificationTime: Self.modificationTime)
                for member in Self.members() { try writer.addFile(path: member.path, data: member.data) }
                try writer.finish()
                close(descriptor)
                let read = try Self.read(url)
                XCTAssertEqual(read.map(\.entry.path), Self.members().map(\.path), "\(compression)")
                XCTAssertEqual(read.map(\.data), Self.members().map(\.data), "\(compression)")
            }
        }

        /// An export's tar (every frame decompressed) is what libarchive writes for its members.
        func testAnExportsTarIsLibarchivesByteForByte() throws {
            let directory = try TemporaryTestDirectory()
            let archive = directory.path("plain.qbak")
            let export = try Questbak.run([
                "export", try directory.copyFixture("v2-typical").path, "-o", archive.path, "--compression", "none", "-q",
            ])
            XCTAssertEqual(export.status, 0, export.standardError)
            let members = try Self.read(archive)
            XCTAssertGreaterThan(members.count, 3)
            let rebuilt = directory.path("rebuilt.tar")
            let descriptor = open(rebuilt.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let createdAt = try XCTUnwrap(
                (try JSONSerialization.jsonObject(with: members[0].data) as? [String: Any])?["createdAt"] as? String)
            let time = Int(try XCTUnwrap(ISO8601DateFormatter().date(from: createdAt)).timeIntervalSince1970)
            let writer = try LibArchiveTarWriter(fileDescriptor: descriptor, compression: .none, modificationTime: time)
            for (entry, data) in members { try writer.addFile(path: entry.path, data: data) }
            try writer.finish()
            close(descriptor)
            XCTAssertEqual(try Data(contentsOf: archive), try Data(contentsOf: rebuilt))
        }
    #endif

    static func firstDifference(_ a: Data, _ b: Data) -> String {
        guard let index = zip(a, b).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else {
            return a.count == b.count ? "equal" : "lengths \(a.count) and \(b.count)"
        }
        return "first difference at byte \(index) (block \(index / 512), offset \(index % 512))"
    }

    // MARK: Other tars

    func testGNUTarReadsWhatItWrites() throws {
        for compression in ArchiveCompression.allCases where compression.isAvailable {
            let directory = try TemporaryTestDirectory()
            let archive = directory.path("archive.tar")
            try Self.write(Self.extractable(), to: archive, compression: compression)
            let output = directory.path("out")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let flag = ["zstd": "--zstd", "gzip": "-z", "none": "--no-auto-compress"][compression.rawValue]!
            let result = try Questbak.runTool(["tar", flag, "-xf", archive.path, "-C", output.path])
            XCTAssertEqual(result.status, 0, "\(compression): \(result.standardError)")
            for member in Self.extractable() {
                XCTAssertEqual(
                    try? Data(contentsOf: output.appendingPathComponent(member.path)), member.data, "\(compression) \(member.path)")
            }
            let listing = try Questbak.runTool(["tar", flag, "-tvf", archive.path])
            XCTAssertTrue(listing.standardOutput.contains("-rw-r--r-- 0/0"), listing.standardOutput)
        }
    }

    func testReadsWhatGNUTarWritesInPOSIXFormat() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source")
        var expected: [String: Data] = [:]
        for (index, member) in Self.extractable().enumerated() {
            // GNU tar stores its own modes and times; the names and bytes are what matter.
            let url = source.appendingPathComponent(member.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try member.data.write(to: url)
            expected[member.path] = member.data
            if index == 0 {
                let unicode = source.appendingPathComponent("ünïcødé-名前.jsonl")
                try Data("x".utf8).write(to: unicode)
                expected["ünïcødé-名前.jsonl"] = Data("x".utf8)
            }
        }
        for (flag, name) in [("--no-auto-compress", "posix.tar"), ("-z", "posix.tar.gz")]
            + (ArchiveCompression.zstd.isAvailable ? [("--zstd", "posix.tar.zst")] : [])
        {
            let archive = directory.path(name)
            let result = try Questbak.runTool(["tar", "--format=posix", flag, "-cf", archive.path, "-C", source.path, "."])
            XCTAssertEqual(result.status, 0, result.standardError)
            var found: [String: Data] = [:]
            for (entry, data) in try Self.read(archive) where entry.isRegularFile {
                found[String(entry.path.dropFirst(2))] = data  // "./name"
            }
            XCTAssertEqual(found, expected, name)
        }
    }

    func testReadsWhatBsdtarWritesWhenItIsInstalled() throws {
        guard (try? Questbak.runTool(["bsdtar", "--version"]))?.status == 0 else {
            throw XCTSkip("bsdtar is not installed here")
        }
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source")
        for member in Self.extractable() {
            let url = source.appendingPathComponent(member.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try member.data.write(to: url)
        }
        let archive = directory.path("bsd.tar.gz")
        XCTAssertEqual(try Questbak.runTool(["bsdtar", "--format=pax", "-czf", archive.path, "-C", source.path, "."]).status, 0)
        let files = try Self.read(archive).filter { $0.entry.isRegularFile }
        XCTAssertEqual(files.count, Self.extractable().count)
    }

    // MARK: Hostile tar

    /// A tar with a regular file, as bytes to damage.
    func plainTar(
        _ members: [Member] = [Member(path: "a.txt", data: Data("hello".utf8)), Member(path: "b.txt", data: Data(count: 700))]
    )
        throws -> (Data, TemporaryTestDirectory)
    {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("plain.tar")
        try Self.write(members, to: url, compression: .none)
        return (try Data(contentsOf: url), directory)
    }

    func readError(_ bytes: Data, in directory: TemporaryTestDirectory) throws -> TarReadError? {
        let url = directory.path("hostile-\(UUID().uuidString).tar")
        try bytes.write(to: url)
        do {
            _ = try Self.read(url)
            return nil
        } catch let error as TarReadError {
            return error
        }
    }

    func testABadChecksumIsDamageAndAFirstBadHeaderIsNotATar() throws {
        var (bytes, directory) = try plainTar()
        // The second member's header starts after the first's header and one data block.
        bytes[1024 + 10] ^= 0x20
        let damaged = try XCTUnwrap(try readError(bytes, in: directory))
        XCTAssertTrue(damaged.message.contains("Damaged tar archive"), damaged.message)
        XCTAssertEqual(damaged.location, "after member a.txt")
        XCTAssertFalse(damaged.isUnrecognizedFormat)
        bytes[1024 + 10] ^= 0x20
        bytes[3] ^= 0x01
        let notATar = try XCTUnwrap(try readError(bytes, in: directory))
        XCTAssertTrue(notATar.isUnrecognizedFormat, notATar.message)
        XCTAssertTrue(try XCTUnwrap(try readError(Data("neither tar nor compressed".utf8), in: directory)).isUnrecognizedFormat)
    }

    func testTruncatedHeadersAndSizesPastTheEndAreTruncation() throws {
        let (bytes, directory) = try plainTar()
        for cut in [1024 + 100, 1024 + 512 + 300] {
            let error = try XCTUnwrap(try readError(bytes.prefix(cut), in: directory), "cut at \(cut)")
            XCTAssertTrue(error.message.contains("Truncated tar archive"), error.message)
        }
        XCTAssertNil(try readError(bytes.prefix(1024 + 512 + 1024), in: directory), "the end blocks are optional")
        // b.txt's header claims far more bytes than follow it.
        let (big, _) = try plainTar([Member(path: "a.txt", data: Data("hello".utf8))])
        var header = TarFormat.header(path: "b.txt", size: 1 << 20, modificationTime: Self.modificationTime)
        header.append(Data(count: 4096))
        let error = try XCTUnwrap(try readError(big.prefix(1024) + header, in: directory))
        XCTAssertEqual(error.message, "Truncated tar archive")
        XCTAssertEqual(error.location, "in member b.txt")
    }

    func testLinksAndUnsafePathsAreReportedForTheCallerToRefuse() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source")
        try FileManager.default.createDirectory(at: source.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: source.appendingPathComponent("sub/file"))
        try FileManager.default.createSymbolicLink(atPath: source.appendingPathComponent("link").path, withDestinationPath: "/etc/passwd")
        try FileManager.default.linkItem(at: source.appendingPathComponent("sub/file"), to: source.appendingPathComponent("hard"))
        let archive = directory.path("links.tar")
        let result = try Questbak.runTool([
            "tar", "--format=posix", "-cf", archive.path, "-C", source.path, "sub/file", "hard", "link", "sub",
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        let entries = Dictionary(try Self.read(archive).map { ($0.entry.path, $0.entry) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(entries["link"]?.linkTarget, "/etc/passwd")
        XCTAssertEqual(entries["link"]?.isRegularFile, false)
        XCTAssertEqual(entries["hard"]?.linkTarget, "sub/file")
        XCTAssertEqual(entries["hard"]?.isRegularFile, false)
        XCTAssertEqual(entries["sub/"]?.isRegularFile, false)
        XCTAssertEqual(entries["sub/file"]?.isRegularFile, true)
        // GNU tar strips "../" when it writes; a hostile writer does not.
        let escaping = directory.path("escaping.tar")
        try Self.write(
            [Member(path: "../escape", data: Data("x".utf8)), Member(path: "/etc/cron.d/x", data: Data())], to: escaping, compression: .none
        )
        XCTAssertEqual(
            try Self.read(escaping).map(\.entry.path), ["../escape", "/etc/cron.d/x"], "kept as written, for ArchiveReader to refuse")
    }

    func testHugeAndMalformedPaxRecordsAreRefused() throws {
        let directory = try TemporaryTestDirectory()
        func extendedHeader(_ body: Data, declared: Int? = nil) -> Data {
            // A libarchive-shaped 'x' header: the one TarFormat makes for a long name, with
            // its size and checksum set for `body`.
            var header = [UInt8](TarFormat.header(path: String(repeating: "p", count: 300), size: 1, modificationTime: 0).prefix(512))
            let size = String(declared ?? body.count, radix: 8)
            let field = Array(String(repeating: "0", count: 11 - size.count).utf8) + Array(size.utf8) + [0x20]
            header.replaceSubrange(124..<136, with: field)
            header.replaceSubrange(148..<156, with: Array("        ".utf8))
            let sum = header.reduce(0) { $0 + Int($1) }
            let checksum = String(sum, radix: 8)
            header.replaceSubrange(148..<155, with: Array((String(repeating: "0", count: 6 - checksum.count) + checksum).utf8) + [0])
            return Data(header) + body + Data(count: TarFormat.padding(after: Int64(body.count)))
        }
        let regular = TarFormat.header(path: "a", size: 0, modificationTime: 0)
        let huge = try XCTUnwrap(try readError(extendedHeader(Data(), declared: 64 << 20) + Data(count: 2048), in: directory))
        XCTAssertTrue(huge.message.contains("extended header of 67108864 bytes"), huge.message)
        for body in ["99 path=short\n", "x path=a\n", "9 pathxx\n", "12 size=-1\n"] {
            let error = try XCTUnwrap(try readError(extendedHeader(Data(body.utf8)) + regular + Data(count: 1024), in: directory), body)
            XCTAssertTrue(error.message.contains("Damaged tar archive"), "\(body): \(error.message)")
        }
        let good = try Self.writeAndRead(extendedHeader(Data("16 path=b/c.txt\n".utf8)) + regular + Data(count: 1024), in: directory)
        XCTAssertEqual(good.map(\.entry.path), ["b/c.txt"])
    }

    static func writeAndRead(_ bytes: Data, in directory: TemporaryTestDirectory) throws -> [(entry: TarEntry, data: Data)] {
        let url = directory.path("bytes-\(UUID().uuidString).tar")
        try bytes.write(to: url)
        return try read(url)
    }

    // MARK: Codecs

    func testCutOrDamagedCompressedStreamsAreErrors() throws {
        for compression in ArchiveCompression.allCases where compression != .none && compression.isAvailable {
            let directory = try TemporaryTestDirectory()
            let url = directory.path("archive")
            try Self.write(Self.members(), to: url, compression: compression)
            let bytes = try Data(contentsOf: url)
            XCTAssertEqual(try Self.writeAndRead(bytes, in: directory).count, Self.members().count)
            XCTAssertNotNil(try readError(bytes.prefix(bytes.count - 5), in: directory), "\(compression) cut short")
            var flipped = bytes
            flipped[bytes.count / 2] ^= 0x10
            XCTAssertNotNil(try readError(flipped, in: directory), "\(compression) with a flipped bit")
        }
    }

    /// Without libzstd, a zstd stream is refused by the codec's name; with it, it is read.
    func testAZstdStreamNeedsTheZstdCodec() throws {
        let directory = try TemporaryTestDirectory()
        let plain = directory.path("plain.tar")
        try Self.write(Self.members(), to: plain, compression: .none)
        let compressed = directory.path("plain.tar.zst")
        XCTAssertEqual(try Questbak.runTool(["zstd", "-q", plain.path, "-o", compressed.path]).status, 0)
        if ArchiveCompression.zstd.isAvailable {
            XCTAssertEqual(try Self.read(compressed).count, Self.members().count)
        } else {
            XCTAssertEqual(try readError(try Data(contentsOf: compressed), in: directory)?.missingCodec, "zstd")
        }
    }
}
