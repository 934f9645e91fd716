// libarchive writes the special members these tests need, so they are in the default build only;
// TarFormatTests covers the Swift reader in both.
#if SystemArchive
    import CArchive
    import Crypto
    import Foundation
    import QuestBakTestSupport
    import XCTest

    @testable import QuestBakFixtures
    @testable import QuestBakKit

    // A hostile-input campaign against ArchiveReader.read, the one door every archive comes in by.
    // Archives are exported from the v1-typical fixture, then damaged: by bytes, through
    // TarArchiveWriter, or through libarchive directly for member types questbak never writes.
    //
    // Case                                                   Expected
    // ------------------------------------------------------ -----------------------------------------------
    // 1 truncated at offset 0 (empty file / empty stream)    unreadable "neither a SQLite store nor a tar…" or
    //                                                        notAQuestbakArchive "the archive is empty"
    //   truncated at a member boundary                       missingMember(the member that would start there)
    //   truncated after the last member (trailer lost)       accepted: every member was verified
    //   truncated inside a member or the compressed stream   unreadable "Truncated …", naming the member
    // 2 bit flip in a zstd or gzip stream                    refused (unreadable, checksumMismatch, …) or, for
    //                                                        bits the decoder ignores, accepted identical
    //   bit flip in a member's data (no compression)         manifest: notAQuestbakArchive/size/… or accepted;
    //                                                        entity or file: checksumMismatch of it, even when
    //                                                        the flip breaks a line (header or caller's parse)
    //   bit flip in a member's tar header                    unreadable "Damaged tar archive after member …"
    // 3 member missing                                       missingMember
    //   member duplicated                                    unexpectedMember "appears more than once"
    //   member not listed                                    unexpectedMember "not listed in the manifest"
    //   members reordered after the manifest                 accepted
    //   manifest not first / absent                          notAQuestbakArchive "the first member is …"
    // 4 manifest count ≠ header count                        invalidLine line 1 "count …"
    //   manifest and header count ≠ records                  countMismatch (fewer) / invalidLine at the first
    //                                                        extra record (more)
    //   wrong sha256 / wrong bytes                           checksumMismatch / sizeMismatch
    //   formatVersion 4 / 0 / missing                        unsupportedFormatVersion(4, 3) / notAQuestbak…
    //   format missing or another                            notAQuestbakArchive "format is missing"
    //   schemaVersion missing (manifest and headers)         accepted, effectiveSchemaVersion "1.0.0"
    //   header entity ≠ member                               invalidLine line 1 "entity …"
    //   a file or an entity listed twice (also by case)      notAQuestbakArchive "listed twice"
    //   manifest not JSON, nested 100 000 deep, wrong types  notAQuestbakArchive
    // 5 ../evil, /etc/passwd, entities/../../x               unexpectedMember "has an unsafe path"
    //   symlink, hard link (even with a listed name)         unexpectedMember "is a link to …"
    //   directory, character device                          unexpectedMember "is not a regular file"
    //   entities/Routine.jsonl + entities/ROUTINE.jsonl      unexpectedMember "appears more than once" (or
    //                                                        "not listed" when ROUTINE comes first)
    //   manifest.json as a symlink                           unexpectedMember "is a link to …"
    //   member named with terminal escapes                   unexpectedMember, the escape printed as \u{1B}
    //   (none of these writes anything to disk)
    // 6 entity of 2 GB of zeros (zstd, ~100 KB on disk)      invalidLine line 1 "longer than 67108864 bytes",
    //                                                        fast, memory flat
    //   entity of 300 MB of empty lines, count 0             invalidLine line 2 "a record beyond the 0 …"
    //   manifest member of 100 MB                            unexpectedMember "more than the 16777216 …",
    //                                                        before its bytes are read
    //   file member of 300 MB                                unexpectedMember "more than the 268435456 …"
    // Fuzz: ArchiveFuzzer over Tests/Corpus/archive          no crash, no input over 2 s, typed errors only

    final class ArchiveReaderTests: XCTestCase {
        /// How much slower than on an idle machine a hang guard lets a read be: the guards catch
        /// reads that go on for minutes (a bomb read to its end, a quadratic loop), and a loaded
        /// 2-core CI machine runs the suite several times slower than an idle one.
        static let loadAllowance = 6.0

        static let createdAt: Int64 = 1_704_067_200  // 2024-01-01T00:00:00Z

        // MARK: Building archives

        struct Member: Equatable {
            var path: String
            var data: Data
        }

        /// A temporary directory holding one export of v1-typical per compression.
        final class Bench {
            let directory: TemporaryTestDirectory
            private var store: URL?
            private var exports: [ArchiveCompression: URL] = [:]
            private var counter = 0

            init() throws { directory = try TemporaryTestDirectory("questbak-reader") }

            func export(_ compression: ArchiveCompression) throws -> URL {
                if let url = exports[compression] { return url }
                if store == nil { store = try directory.copyFixture("v1-typical") }
                let url = directory.path("v1-typical.\(compression.rawValue).qbak")
                _ = try Exporter.export(
                    storeAt: store!, to: .file(url, overwrite: false),
                    options: .timeQuest(createdAt: ArchiveReaderTests.createdAt, compression: compression))
                exports[compression] = url
                return url
            }

            /// The members of a clean export, in archive order.
            func members() throws -> [Member] { try ArchiveReaderTests.members(of: try export(.none)) }

            func manifest() throws -> ArchiveManifest {
                try JSONDecoder().decode(ArchiveManifest.self, from: try members()[0].data)
            }

            /// A fresh file name in the directory.
            func newURL(_ label: String) -> URL {
                counter += 1
                return directory.path("\(counter)-\(label).qbak")
            }

            func write(_ members: [Member], _ label: String, compression: ArchiveCompression = .zstd) throws -> URL {
                let url = newURL(label)
                try ArchiveReaderTests.writeArchive(members, to: url, compression: compression)
                return url
            }

            func write(bytes: Data, _ label: String) throws -> URL {
                let url = newURL(label)
                try bytes.write(to: url)
                return url
            }
        }

        static func members(of url: URL) throws -> [Member] {
            let descriptor = open(url.path, O_RDONLY)
            guard descriptor >= 0 else { throw CocoaError(.fileReadNoPermission) }
            defer { close(descriptor) }
            let reader = try TarArchiveReader(fileDescriptor: descriptor)
            var members: [Member] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while let entry = try reader.nextEntry() {
                var data = Data()
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                    if count == 0 { break }
                    data.append(contentsOf: buffer[0..<count])
                }
                members.append(Member(path: entry.path, data: data))
            }
            return members
        }

        /// Regular-file members through questbak's own writer.
        static func writeArchive(_ members: [Member], to url: URL, compression: ArchiveCompression) throws {
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission) }
            defer { close(descriptor) }
            let writer = try TarArchiveWriter(fileDescriptor: descriptor, compression: compression, modificationTime: Int(createdAt))
            for member in members { try writer.addFile(path: member.path, data: member.data) }
            try writer.finish()
        }

        /// Members of any type, written by libarchive directly (questbak's writer makes only files).
        enum Special {
            case file(Data)
            case symlink(String)
            case hardlink(String)
            case directory
            case characterDevice
        }

        static func writeSpecial(_ entries: [(String, Special)], to url: URL, compression: ArchiveCompression = .zstd) throws {
            let archive = archive_write_new()
            defer { archive_write_free(archive) }
            XCTAssertEqual(archive_write_set_format_pax_restricted(archive), ARCHIVE_OK)
            switch compression {
            case .zstd: XCTAssertEqual(archive_write_add_filter_zstd(archive), ARCHIVE_OK)
            case .gzip: XCTAssertEqual(archive_write_add_filter_gzip(archive), ARCHIVE_OK)
            case .none: XCTAssertEqual(archive_write_add_filter_none(archive), ARCHIVE_OK)
            }
            XCTAssertEqual(archive_write_open_filename(archive, url.path), ARCHIVE_OK)
            for (path, kind) in entries {
                let entry = archive_entry_new()
                defer { archive_entry_free(entry) }
                archive_entry_set_pathname(entry, path)
                archive_entry_set_perm(entry, 0o644)
                archive_entry_set_mtime(entry, Int(createdAt), 0)
                var data = Data()
                switch kind {
                case .file(let bytes):
                    archive_entry_set_filetype(entry, 0o100000)
                    data = bytes
                case .symlink(let target):
                    archive_entry_set_filetype(entry, 0o120000)
                    archive_entry_set_symlink(entry, target)
                case .hardlink(let target):
                    archive_entry_set_filetype(entry, 0o100000)
                    archive_entry_set_hardlink(entry, target)
                case .directory:
                    archive_entry_set_filetype(entry, 0o040000)
                    archive_entry_set_perm(entry, 0o755)
                case .characterDevice:
                    archive_entry_set_filetype(entry, 0o020000)
                    archive_entry_set_rdevmajor(entry, 1)
                    archive_entry_set_rdevminor(entry, 3)
                }
                archive_entry_set_size(entry, Int64(data.count))
                XCTAssertEqual(archive_write_header(archive, entry), ARCHIVE_OK, path)
                if !data.isEmpty {
                    let written = data.withUnsafeBytes { archive_write_data(archive, $0.baseAddress, $0.count) }
                    XCTAssertEqual(written, data.count)
                }
            }
            XCTAssertEqual(archive_write_close(archive), ARCHIVE_OK)
        }

        static func sha256(_ data: Data) -> String { SHA256.hash(data: data).hexString }

        static func encode(_ manifest: ArchiveManifest) throws -> Data { try manifest.encoded() }

        /// The members with the manifest decoded, changed and encoded again.
        static func withManifest(_ members: [Member], _ change: (inout ArchiveManifest) -> Void) throws -> [Member] {
            var manifest = try JSONDecoder().decode(ArchiveManifest.self, from: members[0].data)
            change(&manifest)
            var members = members
            members[0].data = try manifest.encoded()
            return members
        }

        /// The members with the manifest as a loose JSON object, for keys the Codable type needs.
        static func withManifestObject(_ members: [Member], _ change: (inout [String: Any]) -> Void) throws -> [Member] {
            var object = try JSONSerialization.jsonObject(with: members[0].data) as! [String: Any]
            change(&object)
            var members = members
            members[0].data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            return members
        }

        /// Replaces one entity member's bytes and keeps the manifest's bytes and sha256 true to them.
        static func replacing(_ path: String, in members: [Member], with data: Data) throws -> [Member] {
            var members = try withManifest(members) { manifest in
                for index in manifest.entities.indices where manifest.entities[index].path == path {
                    manifest.entities[index].bytes = Int64(data.count)
                    manifest.entities[index].sha256 = sha256(data)
                }
            }
            let index = members.firstIndex { $0.path == path }!
            members[index].data = data
            return members
        }

        static func lines(_ data: Data) -> [String] {
            String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }

        static func joinLines(_ lines: [String]) -> Data { Data(lines.map { $0 + "\n" }.joined().utf8) }

        /// Offsets of every ustar header in an uncompressed archive, and where the last member ends.
        static func layout(_ tar: Data) -> (headers: [Int], end: Int) {
            let bytes = [UInt8](tar)
            let headers = ArchiveFuzzer.headerOffsets(bytes)
            let last = headers.last!
            let size = Int(String(decoding: bytes[(last + 124)..<(last + 135)], as: UTF8.self), radix: 8)!
            return (headers, last + 512 + (size + 511) / 512 * 512)
        }

        // MARK: Reading

        final class Box: @unchecked Sendable {
            var result: Result<ArchiveReader.Verification, Error>?
            var elapsed: Double = 0
        }

        /// Reads `url` on another thread, so that a hang fails the test instead of stopping it.
        func read(
            _ url: URL, limits: ArchiveReader.Limits = .init(), timeout: Double = 20,
            file: StaticString = #filePath, line: UInt = #line
        ) -> (Result<ArchiveReader.Verification, Error>?, Double) {
            let box = Box()
            let done = DispatchSemaphore(value: 0)
            let start = Date()
            var reader = ArchiveReader(path: url.path)
            reader.limits = limits
            let finalReader = reader
            let aside = Box()
            DispatchQueue.global().async {
                box.result = Result { try finalReader.read() }
                let elapsed = Date().timeIntervalSince(start)
                // Read again with its members of lines hashed on another thread (another app's
                // restore reads so): the same verification or the same error.
                var hashingAside = finalReader
                hashingAside.hashesLinesAside = true
                aside.result = Result { try hashingAside.read() }
                box.elapsed = elapsed
                done.signal()
            }
            if done.wait(timeout: .now() + 2 * timeout) == .timedOut {
                XCTFail("reading \(url.lastPathComponent) did not end within \(timeout) s", file: file, line: line)
                return (nil, timeout)
            }
            XCTAssertEqual(
                Self.outcome(aside.result), Self.outcome(box.result), "\(url.lastPathComponent), hashed aside", file: file, line: line)
            return (box.result, box.elapsed)
        }

        /// What a read gave, as text: the verification's encoding, or the error.
        static func outcome(_ result: Result<ArchiveReader.Verification, Error>?) -> String {
            switch result {
            case .success(let verification)?:
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                return (try? encoder.encode(verification)).map { String(decoding: $0, as: UTF8.self) } ?? "unencodable"
            case .failure(let error)?: return "error \(error)"
            case nil: return "none"
            }
        }

        /// Hashed aside, a member's reads are hashed on another thread, into the same digest.
        func testReadsHashedAsideAreHashedOnAnotherThreadIntoTheSameDigest() {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<(700 * 1024)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var whole = SHA256()
            whole.update(data: bytes)
            for aside in [false, true] {
                let hasher = ChunkHasher(aside: aside)
                for start in stride(from: 0, to: bytes.count, by: 256 * 1024) {
                    hasher.update(bytes[start..<min(start + 256 * 1024, bytes.count)])
                }
                XCTAssertEqual(hasher.finalize(), whole.finalize().hexString, "aside \(aside)")
                XCTAssertEqual(hasher.chunksHashedElsewhere, aside ? 3 : 0, "aside \(aside)")
            }
        }

        /// Reads an archive that must be refused and checks the error: its case (exactly, or by
        /// name), that its message names the archive and each of `mentions`, that the message is
        /// safe to print, and that it came quickly.
        @discardableResult
        func assertRefused(
            _ url: URL, _ expected: ArchiveError? = nil, kind: String? = nil, mentions: [String] = [], within seconds: Double = 5,
            limits: ArchiveReader.Limits = .init(), file: StaticString = #filePath, line: UInt = #line
        ) -> ArchiveError? {
            let (result, elapsed) = read(url, limits: limits, timeout: max(20, seconds * Self.loadAllowance + 5), file: file, line: line)
            // A guard against reading a bomb to its end (minutes), not a speed target: the bound is
            // loose enough for a CI machine running several builds (a 10 s bound once took 13.6 s).
            let bound = seconds * Self.loadAllowance
            XCTAssertLessThan(elapsed, bound, "\(url.lastPathComponent) took \(elapsed) s", file: file, line: line)
            switch result {
            case .none:
                return nil
            case .success:
                XCTFail("\(url.lastPathComponent) was accepted", file: file, line: line)
                return nil
            case .failure(let error as ArchiveError):
                if let expected { XCTAssertEqual(error, expected, file: file, line: line) }
                if let kind { XCTAssertEqual(ArchiveFuzzer.caseName(error), kind, "\(error)", file: file, line: line) }
                let message = error.errorDescription ?? ""
                XCTAssertNil(ArchiveFuzzer.messageProblem(error, path: url.path), file: file, line: line)
                for mention in mentions {
                    XCTAssertTrue(
                        message.contains(mention), "\(message.debugDescription) does not mention \(mention)", file: file, line: line)
                }
                return error
            case .failure(let error):
                XCTFail("\(url.lastPathComponent): not an ArchiveError: \(error)", file: file, line: line)
                return nil
            }
        }

        @discardableResult
        func assertAccepted(_ url: URL, file: StaticString = #filePath, line: UInt = #line) -> ArchiveReader.Verification? {
            let (result, _) = read(url, file: file, line: line)
            switch result {
            case .success(let verification): return verification
            case .failure(let error): XCTFail("\(url.lastPathComponent) was refused: \(error)", file: file, line: line)
            case .none: break
            }
            return nil
        }

        /// The member an error names, if its case names one.
        static func member(of error: ArchiveError) -> String? {
            switch error {
            case .unexpectedMember(_, let member, _), .missingMember(_, let member), .sizeMismatch(_, let member, _, _),
                .checksumMismatch(_, let member, _, _), .countMismatch(_, let member, _, _), .invalidLine(_, let member, _, _):
                return member
            default:
                return nil
            }
        }

        // MARK: Baseline

        func testCleanExportsAreAcceptedInEveryCompression() throws {
            let bench = try Bench()
            let manifest = try bench.manifest()
            for compression in ArchiveCompression.allCases {
                let verification = assertAccepted(try bench.export(compression))
                XCTAssertEqual(verification?.manifest, manifest)
                XCTAssertEqual(verification?.verifiedMembers, manifest.entities.count + manifest.files.count)
            }
        }

        // MARK: 1 Truncation

        func testTruncationAtEveryMemberBoundary() throws {
            let bench = try Bench()
            let members = try bench.members()
            let tar = try Data(contentsOf: try bench.export(.none))
            let (headers, end) = Self.layout(tar)
            XCTAssertEqual(headers.count, members.count)
            for compression in ArchiveCompression.allCases {
                for (index, boundary) in (headers + [end]).enumerated() {
                    let url = try bench.write(
                        bytes: try RawCompression.compress(tar.prefix(boundary), with: compression), "cut-\(compression)-\(boundary)")
                    switch index {
                    case 0:
                        let error = assertRefused(url)
                        let expected: [ArchiveError] = [
                            .unreadable(path: url.path, reason: "neither a SQLite store nor a tar archive (plain, gzip or zstd)"),
                            .notAQuestbakArchive(path: url.path, reason: "the archive is empty"),
                        ]
                        XCTAssertTrue(error.map { expected.contains($0) } ?? false, "\(String(describing: error))")
                    case members.count:
                        // Only the two zero blocks that end a tar are gone: every member was verified.
                        assertAccepted(url)
                    default:
                        assertRefused(url, .missingMember(path: url.path, member: members[index].path), mentions: [members[index].path])
                    }
                }
            }
        }

        func testTruncationAtRandomOffsets() throws {
            let bench = try Bench()
            let names = try bench.members().map(\.path)
            let tar = try Data(contentsOf: try bench.export(.none))
            let (headers, end) = Self.layout(tar)
            var random = SeededGenerator(seed: 20)
            for compression in ArchiveCompression.allCases {
                let whole = try Data(contentsOf: try bench.export(compression))
                // Inside the tar's members (uncompressed) or anywhere in the compressed stream.
                let range = compression == .none ? 1..<end : 1..<whole.count
                var offsets: Set<Int> = []
                while offsets.count < 20 {
                    let offset = Int.random(in: range, using: &random)
                    if compression != .none || !headers.contains(offset) { offsets.insert(offset) }
                }
                var unrecognised = 0
                defer { XCTAssertLessThan(unrecognised, 5, "\(compression)") }
                for offset in offsets.sorted() {
                    let url = try bench.write(bytes: whole.prefix(offset), "cut-\(compression)-\(offset)")
                    guard let error = assertRefused(url, kind: "unreadable") else { continue }
                    let message = error.errorDescription ?? ""
                    // Too little left to tell a tar (or a compressed stream) at all.
                    if message.contains("neither a SQLite store nor a tar archive") {
                        unrecognised += 1
                        continue
                    }
                    XCTAssertTrue(message.lowercased().contains("truncated"), message)
                    if compression == .none {
                        // The message says where: in or after a member named by the archive. (A
                        // decompressor reads ahead of the tar, so there the place is not known.)
                        XCTAssertTrue(names.contains { message.contains("member \($0)") }, message)
                    }
                }
            }
        }

        // MARK: 2 Bit flips

        func testBitFlipsInCompressedStreams() throws {
            let bench = try Bench()
            let manifest = try bench.manifest()
            var random = SeededGenerator(seed: 2)
            var refused = 0
            for compression in [ArchiveCompression.zstd, .gzip] {
                let whole = [UInt8](try Data(contentsOf: try bench.export(compression)))
                for _ in 0..<40 {
                    var bytes = whole
                    let offset = Int.random(in: 0..<bytes.count, using: &random)
                    bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                    let url = try bench.write(bytes: Data(bytes), "flip-\(compression)-\(offset)")
                    let (result, elapsed) = read(url)
                    XCTAssertLessThan(elapsed, 5 * Self.loadAllowance)
                    switch result {
                    case .success(let verification):
                        // A bit the decoder ignores (a header flag, gzip's timestamp): the content
                        // was still proven identical, member by member.
                        XCTAssertEqual(verification.manifest, manifest, "\(compression) flip at \(offset)")
                    case .failure(let error as ArchiveError):
                        refused += 1
                        XCTAssertNil(ArchiveFuzzer.messageProblem(error, path: url.path))
                    case .failure(let error):
                        XCTFail("\(compression) flip at \(offset): not an ArchiveError: \(error)")
                    case .none:
                        break
                    }
                }
            }
            XCTAssertGreaterThan(refused, 60)
        }

        func testBitFlipsInsideEveryMemberOfAnUncompressedArchive() throws {
            let bench = try Bench()
            let members = try bench.members()
            let manifest = try bench.manifest()
            let tar = [UInt8](try Data(contentsOf: try bench.export(.none)))
            let (headers, _) = Self.layout(Data(tar))
            var random = SeededGenerator(seed: 3)
            for (index, member) in members.enumerated() {
                // In the member's data.
                for _ in 0..<8 {
                    var bytes = tar
                    let offset = headers[index] + 512 + Int.random(in: 0..<member.data.count, using: &random)
                    bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                    let url = try bench.write(bytes: Data(bytes), "flip-data-\(offset)")
                    if member.path == ArchiveManifest.path {
                        // The manifest has no checksum of its own: a flip in createdAt or a tool name
                        // passes; anything that matters to the members is caught by them.
                        let (result, _) = read(url)
                        if case .success(let verification) = result {
                            XCTAssertEqual(verification.manifest.entities.map(\.path), manifest.entities.map(\.path))
                            XCTAssertEqual(verification.manifest.files, manifest.files)
                        } else if case .failure(let error as ArchiveError) = result {
                            XCTAssertNil(ArchiveFuzzer.messageProblem(error, path: url.path))
                        } else {
                            XCTFail("manifest flip at \(offset): \(String(describing: result))")
                        }
                        continue
                    }
                    assertRefused(url, kind: "checksumMismatch", mentions: ["member \(member.path) has SHA-256"])
                }
                // In the member's tar header: its checksum no longer adds up.
                for _ in 0..<4 {
                    var bytes = tar
                    let offset = headers[index] + Int.random(in: 0..<148, using: &random)
                    bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                    let url = try bench.write(bytes: Data(bytes), "flip-header-\(offset)")
                    if index == 0 {
                        // libarchive then cannot even tell a tar.
                        assertRefused(
                            url, .unreadable(path: url.path, reason: "neither a SQLite store nor a tar archive (plain, gzip or zstd)"))
                    } else {
                        assertRefused(
                            url, .unreadable(path: url.path, reason: "Damaged tar archive after member \(members[index - 1].path)"))
                    }
                }
            }
        }

        /// Damage that breaks a line is reported as the damage (a checksum mismatch), whether the
        /// header check or the caller refused the line; in an intact member the line's own error stands.
        func testALineRefusedInADamagedMemberIsReportedAsTheChecksumMismatch() throws {
            struct Refused: Error, Equatable { var line: Int }
            let bench = try Bench()
            let members = try bench.members()
            let manifest = try bench.manifest()
            let routine = manifest.entities.first { $0.name == "Routine" }!
            let index = members.firstIndex { $0.path == routine.path }!
            func read(_ members: [Member], _ label: String) throws -> Error? {
                let reader = ArchiveReader(path: try bench.write(members, label).path)
                let result = Result {
                    try reader.read(onRecordLine: { (member: ArchiveManifest.EntityMember, line: Int, _: Data) throws in
                        if member.name == "Routine" && line == 2 { throw Refused(line: line) }
                    })
                }
                if case .failure(let error) = result { return error }
                return nil
            }
            XCTAssertEqual(try read(members, "intact") as? Refused, Refused(line: 2))

            var damaged = members
            damaged[index].data[damaged[index].data.count - 5] ^= 0x04
            let error = try read(damaged, "damaged-record") as? ArchiveError
            XCTAssertEqual(ArchiveFuzzer.caseName(error ?? .missingMember(path: "", member: "")), "checksumMismatch")

            damaged = members
            damaged[index].data[3] = UInt8(ascii: "{")
            let url = try bench.write(damaged, "damaged-header")
            assertRefused(url, kind: "checksumMismatch", mentions: ["member entities/Routine.jsonl has SHA-256"])
            // (With more than Limits.checksumAfterLineErrorBytes left, the line's error comes at
            // once instead: testDecompressionBombOfEmptyLines.)
        }

        // MARK: 3 Members missing, duplicated, reordered

        func testMissingDuplicatedUnlistedAndReorderedMembers() throws {
            let bench = try Bench()
            let members = try bench.members()
            let routine = members.firstIndex { $0.path == "entities/Routine.jsonl" }!

            var missing = members
            missing.remove(at: routine)
            var url = try bench.write(missing, "missing")
            assertRefused(url, .missingMember(path: url.path, member: "entities/Routine.jsonl"), mentions: ["entities/Routine.jsonl"])

            var missingFile = members
            missingFile.removeAll { $0.path == "store/metadata.plist" }
            url = try bench.write(missingFile, "missing-file")
            assertRefused(url, .missingMember(path: url.path, member: "store/metadata.plist"))

            var duplicated = members
            duplicated.insert(members[routine], at: routine + 1)
            url = try bench.write(duplicated, "duplicated")
            assertRefused(url, kind: "unexpectedMember", mentions: ["member entities/Routine.jsonl", "appears more than once"])

            var twoManifests = members
            twoManifests.append(members[0])
            url = try bench.write(twoManifests, "two-manifests")
            assertRefused(url, kind: "unexpectedMember", mentions: ["member manifest.json", "appears more than once"])

            var unlisted = members
            unlisted.insert(Member(path: "entities/Extra.jsonl", data: Data("{}\n".utf8)), at: 2)
            url = try bench.write(unlisted, "unlisted")
            assertRefused(
                url, .unexpectedMember(path: url.path, member: "entities/Extra.jsonl", reason: "not listed in the manifest"),
                mentions: ["entities/Extra.jsonl"])

            // Any order after the manifest is accepted (docs/archive-format.md).
            let reordered = [members[0]] + members.dropFirst().reversed()
            url = try bench.write(reordered, "reordered")
            XCTAssertEqual(assertAccepted(url)?.verifiedMembers, members.count - 1)

            var manifestSecond = members
            manifestSecond.swapAt(0, 1)
            url = try bench.write(manifestSecond, "manifest-second")
            assertRefused(
                url, .notAQuestbakArchive(path: url.path, reason: "the first member is \(members[1].path), not manifest.json"),
                mentions: [members[1].path])

            url = try bench.write(Array(members.dropFirst()), "no-manifest")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["not manifest.json"])

            url = try bench.write([], "no-members")
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "the archive is empty"))
        }

        // MARK: 4 Manifest lies

        func testManifestLies() throws {
            let bench = try Bench()
            let members = try bench.members()
            let manifest = try bench.manifest()
            let routine = manifest.entities.first { $0.name == "Routine" }!

            var url = try bench.write(try Self.withManifest(members) { $0.entities[2].count += 1 }, "count")
            assertRefused(
                url, kind: "invalidLine",
                mentions: ["entities/Routine.jsonl line 1", "count \(routine.count), the manifest says \(routine.count + 1)"])

            url = try bench.write(try Self.withManifest(members) { $0.entities[2].sha256 = String(repeating: "0", count: 64) }, "sha")
            assertRefused(
                url,
                .checksumMismatch(path: url.path, member: routine.path, expected: String(repeating: "0", count: 64), found: routine.sha256),
                mentions: [routine.path])

            url = try bench.write(try Self.withManifest(members) { $0.entities[2].bytes += 1 }, "bytes")
            assertRefused(
                url, .sizeMismatch(path: url.path, member: routine.path, declared: routine.bytes + 1, found: routine.bytes),
                mentions: [routine.path])

            url = try bench.write(try Self.withManifest(members) { $0.files[0].bytes -= 1 }, "file-bytes")
            assertRefused(url, kind: "sizeMismatch", mentions: ["store/metadata.plist"])

            url = try bench.write(try Self.withManifest(members) { $0.formatVersion = 4 }, "version-4")
            let newer = assertRefused(url, .unsupportedFormatVersion(path: url.path, found: 4, supported: 3))
            XCTAssertTrue(newer?.errorDescription?.contains("version 4 is newer") == true)

            url = try bench.write(try Self.withManifest(members) { $0.formatVersion = 0 }, "version-0")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["formatVersion 0"])

            url = try bench.write(try Self.withManifestObject(members) { $0["formatVersion"] = nil }, "no-version")
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "formatVersion is missing"))

            url = try bench.write(try Self.withManifestObject(members) { $0["format"] = nil }, "no-format")
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "format is missing, not \"questbak-archive\""))

            url = try bench.write(try Self.withManifestObject(members) { $0["format"] = "\u{1B}]0;owned\u{07}" }, "other-format")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["\\u{1B}]0;owned\\u{7}"])

            // Missing schemaVersion means 1.0.0; entity headers without one then agree.
            var legacy = try Self.withManifestObject(members) { $0["schemaVersion"] = nil }
            for entity in manifest.entities {
                var lines = Self.lines(legacy.first { $0.path == entity.path }!.data)
                lines[0] = "{\"entity\":\"\(entity.name)\",\"count\":\(entity.count)}"
                legacy = try Self.replacing(entity.path, in: legacy, with: Self.joinLines(lines))
            }
            url = try bench.write(legacy, "no-schema-version")
            let verification = assertAccepted(url)
            XCTAssertNil(verification?.manifest.schemaVersion)
            XCTAssertEqual(verification?.manifest.effectiveSchemaVersion, "1.0.0")
            // …and headers that still say 1.0.0 agree too.
            url = try bench.write(try Self.withManifestObject(members) { $0["schemaVersion"] = nil }, "no-schema-version-2")
            XCTAssertEqual(assertAccepted(url)?.manifest.effectiveSchemaVersion, "1.0.0")
            // A header saying otherwise does not.
            url = try bench.write(try Self.withManifest(members) { $0.schemaVersion = "2.0.0" }, "schema-version-lie")
            assertRefused(url, kind: "invalidLine", mentions: ["line 1", "schemaVersion 1.0.0, the manifest says 2.0.0"])

            // A header whose entity and count disagree with the manifest.
            var lines = Self.lines(members.first { $0.path == routine.path }!.data)
            lines[0] = "{\"schemaVersion\":\"1.0.0\",\"entity\":\"GameSession\",\"count\":\(routine.count + 5)}"
            url = try bench.write(try Self.replacing(routine.path, in: members, with: Self.joinLines(lines)), "header")
            assertRefused(
                url, kind: "invalidLine",
                mentions: ["entities/Routine.jsonl line 1", "entity GameSession, the manifest says Routine", "count \(routine.count + 5)"])

            lines = Self.lines(members.first { $0.path == routine.path }!.data)
            lines[0] = "not json"
            url = try bench.write(try Self.replacing(routine.path, in: members, with: Self.joinLines(lines)), "header-not-json")
            assertRefused(url, kind: "invalidLine", mentions: ["entities/Routine.jsonl line 1", "not a header object"])

            // Header and manifest agree on a count the records do not have: fewer…
            lines = Self.lines(members.first { $0.path == routine.path }!.data)
            lines.removeLast()
            var fewer = try Self.replacing(routine.path, in: members, with: Self.joinLines(lines))
            fewer = try Self.withManifest(fewer) { $0.entities[2].count = routine.count }
            url = try bench.write(fewer, "fewer")
            assertRefused(url, .countMismatch(path: url.path, member: routine.path, declared: routine.count, found: routine.count - 1))
            // …or more: refused at the first record not announced.
            lines = Self.lines(members.first { $0.path == routine.path }!.data)
            lines.append(lines.last!)
            url = try bench.write(try Self.replacing(routine.path, in: members, with: Self.joinLines(lines)), "more")
            assertRefused(
                url, kind: "invalidLine", mentions: ["entities/Routine.jsonl line \(routine.count + 2)", "beyond the \(routine.count)"])

            // Listed twice: used to trap in Dictionary(uniqueKeysWithValues:).
            url = try bench.write(try Self.withManifest(members) { $0.files.append($0.files[0]) }, "file-twice")
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "file store/metadata.plist is listed twice"))
            url = try bench.write(try Self.withManifest(members) { $0.entities.append($0.entities[2]) }, "entity-twice")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["entity Routine is listed twice"])
            url = try bench.write(
                try Self.withManifest(members) { manifest in
                    var clash = manifest.entities[2]
                    clash.name = "ROUTINE"
                    clash.path = "entities/ROUTINE.jsonl"
                    manifest.entities.append(clash)
                }, "entity-case")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["entity ROUTINE is listed twice"])

            url = try bench.write(try Self.withManifest(members) { $0.files[0].path = "store/../../etc/passwd" }, "file-path")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["unknown file member store/../../etc/passwd"])
            url = try bench.write(try Self.withManifest(members) { $0.entities[2].path = "entities/../Routine.jsonl" }, "entity-path")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["expected entities/<Name>.jsonl"])
            url = try bench.write(try Self.withManifest(members) { $0.entities[2].count = -1 }, "negative")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["negative"])

            // Not a manifest at all.
            var broken = members
            broken[0].data = Data("{\"format\": \"questbak-archive\", \"formatVersion\": 1, ".utf8)
            url = try bench.write(broken, "not-json")
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "manifest.json is not a JSON object"))
            broken[0].data = Data(
                ("{\"format\":\"questbak-archive\",\"formatVersion\":1,\"x\":" + String(repeating: "[", count: 100_000)).utf8)
            url = try bench.write(broken, "nested")
            assertRefused(url, kind: "notAQuestbakArchive")
            url = try bench.write(try Self.withManifestObject(members) { $0["entities"] = "all of them" }, "wrong-type")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["wrong type at entities"])
            url = try bench.write(try Self.withManifestObject(members) { $0["source"] = nil }, "no-source")
            assertRefused(url, kind: "notAQuestbakArchive", mentions: ["missing source"])
        }

        // MARK: 5 Tar attacks

        func testHostileMemberTypesAndNames() throws {
            let bench = try Bench()
            let members = try bench.members()
            let valid = members.map { ($0.path, Special.file($0.data)) }
            let outside = bench.directory.url.deletingLastPathComponent()
            let before = try DirectoryState(of: bench.directory.url)
            let cases: [(String, Special, String)] = [
                ("../evil", .file(Data("x".utf8)), "has an unsafe path"),
                ("/etc/passwd", .file(Data("root::0:0::/:/bin/sh\n".utf8)), "has an unsafe path"),
                ("entities/../../x", .file(Data("x".utf8)), "has an unsafe path"),
                ("entities/Routine.jsonl", .symlink("/etc/passwd"), "is a link to /etc/passwd; archives hold only regular files"),
                ("store/metadata.plist", .hardlink("manifest.json"), "is a link to manifest.json; archives hold only regular files"),
                // libarchive writes a directory's name with a trailing slash.
                ("entities/", .directory, "is not a regular file"),
                ("entities/Routine.jsonl", .characterDevice, "is not a regular file"),
            ]
            for compression in ArchiveCompression.allCases {
                for (name, kind, reason) in cases {
                    // Right after the manifest, so a listed name is refused for its type alone.
                    var entries = valid
                    entries.insert((name, kind), at: 1)
                    let url = bench.newURL("attack")
                    try Self.writeSpecial(entries, to: url, compression: compression)
                    assertRefused(url, .unexpectedMember(path: url.path, member: name, reason: reason), mentions: [name])
                }
            }

            // The manifest itself as a link or directory.
            var url = bench.newURL("manifest-link")
            try Self.writeSpecial([("manifest.json", Special.symlink("/etc/passwd"))] + valid.dropFirst(), to: url)
            assertRefused(url, kind: "unexpectedMember", mentions: ["member manifest.json", "is a link to /etc/passwd"])
            url = bench.newURL("manifest-directory")
            try Self.writeSpecial([("manifest.json", Special.directory)] + valid.dropFirst(), to: url)
            assertRefused(url, .notAQuestbakArchive(path: url.path, reason: "the first member is manifest.json/, not manifest.json"))
            url = bench.newURL("manifest-device")
            try Self.writeSpecial([("manifest.json", Special.characterDevice)] + valid.dropFirst(), to: url)
            assertRefused(url, .unexpectedMember(path: url.path, member: "manifest.json", reason: "is not a regular file"))

            // Names that clash after case folding: one file on a case-insensitive disk.
            let routine = members.first { $0.path == "entities/Routine.jsonl" }!
            var clash = members
            clash.append(Member(path: "entities/ROUTINE.jsonl", data: routine.data))
            url = try bench.write(clash, "case-after")
            assertRefused(url, kind: "unexpectedMember", mentions: ["member entities/ROUTINE.jsonl", "appears more than once"])
            clash = members
            clash.insert(Member(path: "entities/ROUTINE.jsonl", data: routine.data), at: 1)
            url = try bench.write(clash, "case-before")
            assertRefused(url, .unexpectedMember(path: url.path, member: "entities/ROUTINE.jsonl", reason: "not listed in the manifest"))
            clash = members
            clash.append(Member(path: "MANIFEST.JSON", data: members[0].data))
            url = try bench.write(clash, "case-manifest")
            assertRefused(url, kind: "unexpectedMember", mentions: ["member MANIFEST.JSON", "appears more than once"])

            // A name made to rewrite the terminal it is printed on.
            var escape = members
            escape.insert(Member(path: "entities/\u{1B}[2J\u{1B}[31mRoutine\u{202E}.jsonl", data: routine.data), at: 1)
            url = try bench.write(escape, "escape")
            let error = assertRefused(url, kind: "unexpectedMember", mentions: ["entities/\\u{1B}[2J\\u{1B}[31mRoutine\\u{202E}.jsonl"])
            XCTAssertFalse(error?.errorDescription?.contains("\u{1B}") ?? true)
            // An enormous name is cut short in the message.
            var long = members
            long.insert(Member(path: "entities/" + String(repeating: "a", count: 100_000), data: Data()), at: 1)
            url = try bench.write(long, "long-name")
            XCTAssertLessThan(
                assertRefused(url, kind: "unexpectedMember", mentions: ["(100009 bytes)"])?.errorDescription?.count ?? 0, 1000)

            // Reading extracts nothing, anywhere.
            XCTAssertEqual(
                try DirectoryState(of: bench.directory.url).files.keys.filter { !$0.hasSuffix(".qbak") }.sorted(),
                before.files.keys.filter { !$0.hasSuffix(".qbak") }.sorted())
            XCTAssertFalse(FileManager.default.fileExists(atPath: outside.appendingPathComponent("evil").path))
            for name in ["evil", "x", "etc", "entities", "store", "manifest.json"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: bench.directory.path(name).path), name)
            }
        }

        // MARK: 6 Bombs

        /// Peak resident memory of this process so far, in bytes.
        static func peakMemory() -> Int {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return usage.ru_maxrss * 1024
        }

        /// An archive whose first entity member is `size` bytes of `byte`, streamed, never held.
        func writeBomb(_ bench: Bench, size: Int64, byte: UInt8, header: String?, count: Int, label: String) throws -> URL {
            let members = try bench.members()
            let members2 = try Self.withManifest(members) { manifest in
                manifest.entities[0].bytes = size
                manifest.entities[0].count = count
            }
            let url = bench.newURL(label)
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            defer { close(descriptor) }
            let writer = try TarArchiveWriter(fileDescriptor: descriptor, compression: .zstd, modificationTime: Int(Self.createdAt))
            try writer.addFile(path: members2[0].path, data: members2[0].data)
            let prefix = Data((header.map { $0 + "\n" } ?? "").utf8)
            try writer.addFile(path: members2[1].path, size: size) { write in
                try prefix.withUnsafeBytes { try write($0) }
                let chunk = [UInt8](repeating: byte, count: 1 << 20)
                var left = size - Int64(prefix.count)
                try chunk.withUnsafeBytes { buffer in
                    while left > 0 {
                        let count = Int(min(left, Int64(buffer.count)))
                        try write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        left -= Int64(count)
                    }
                }
            }
            for member in members2.dropFirst(2) { try writer.addFile(path: member.path, data: member.data) }
            try writer.finish()
            return url
        }

        func testDecompressionBombOfOneEndlessLine() throws {
            let bench = try Bench()
            let size: Int64 = 2 << 30
            let url = try writeBomb(bench, size: size, byte: 0, header: nil, count: 0, label: "bomb-line")
            let onDisk = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
            XCTAssertLessThan(onDisk, 1 << 20)
            let memoryBefore = Self.peakMemory()
            assertRefused(
                url, .invalidLine(path: url.path, member: "entities/GameSession.jsonl", line: 1, reason: "longer than 67108864 bytes"),
                within: 10)
            XCTAssertLessThan(Self.peakMemory() - memoryBefore, 128 << 20, "reading the bomb grew the process's peak memory")
        }

        func testDecompressionBombOfEmptyLines() throws {
            let bench = try Bench()
            let header = "{\"schemaVersion\":\"1.0.0\",\"entity\":\"GameSession\",\"count\":0}"
            let url = try writeBomb(bench, size: 300 << 20, byte: 0x0A, header: header, count: 0, label: "bomb-lines")
            assertRefused(
                url,
                .invalidLine(
                    path: url.path, member: "entities/GameSession.jsonl", line: 2,
                    reason: "a record beyond the 0 the manifest and header declare"),
                within: 5)
        }

        func testHugeManifestAndFileMembersAreRefusedBeforeBeingRead() throws {
            let bench = try Bench()
            let members = try bench.members()
            var url = bench.newURL("huge-manifest")
            do {
                let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                defer { close(descriptor) }
                let writer = try TarArchiveWriter(fileDescriptor: descriptor, compression: .zstd, modificationTime: Int(Self.createdAt))
                let manifestSize: Int64 = 100 << 20
                try writer.addFile(path: "manifest.json", size: manifestSize) { write in
                    let chunk = [UInt8](repeating: 0x20, count: 1 << 20)
                    for _ in 0..<100 { try chunk.withUnsafeBytes { try write($0) } }
                }
                try writer.finish()
            }
            assertRefused(
                url,
                .unexpectedMember(
                    path: url.path, member: "manifest.json", reason: "104857600 bytes, more than the 16777216 a manifest may have"),
                within: 1)

            let fileSize: Int64 = 300 << 20
            let listed = try Self.withManifest(members) { $0.files[0].bytes = fileSize }
            url = bench.newURL("huge-file")
            do {
                let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                defer { close(descriptor) }
                let writer = try TarArchiveWriter(fileDescriptor: descriptor, compression: .zstd, modificationTime: Int(Self.createdAt))
                try writer.addFile(path: "manifest.json", data: listed[0].data)
                try writer.addFile(path: "store/metadata.plist", size: fileSize) { write in
                    let chunk = [UInt8](repeating: 0, count: 1 << 20)
                    for _ in 0..<300 { try chunk.withUnsafeBytes { try write($0) } }
                }
                try writer.finish()
            }
            assertRefused(
                url,
                .unexpectedMember(
                    path: url.path, member: "store/metadata.plist", reason: "314572800 bytes, more than the 268435456 allowed"),
                within: 1)
        }

        // MARK: Corpus and fuzzing

        static let corpus = Repository.root.appendingPathComponent("Tests/Corpus/archive")

        /// Every committed seed reads as its name says: `accepted-…` or `refused-<case>-…`.
        func testCorpus() throws {
            let seeds = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter { $0.hasSuffix(".qbak") }.sorted()
            XCTAssertGreaterThanOrEqual(seeds.count, 4)
            for seed in seeds {
                let url = Self.corpus.appendingPathComponent(seed)
                XCTAssertLessThan(try Data(contentsOf: url).count, 20_000, seed)
                if seed.hasPrefix("accepted-") {
                    assertAccepted(url)
                } else {
                    let kind = seed.split(separator: "-")[1]
                    assertRefused(url, kind: String(kind))
                }
            }
        }

        /// ~300 mutants of the corpus; `questbak-fuzz` runs the same loop for as long as asked.
        func testFuzzCorpus() throws {
            let directory = try TemporaryTestDirectory("questbak-fuzz")
            let seeds = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter { $0.hasSuffix(".qbak") }.sorted()
            var total = ArchiveFuzzer.Report()
            for (index, seed) in seeds.enumerated() {
                let report = try ArchiveFuzzer.run(
                    seedArchive: Self.corpus.appendingPathComponent(seed), iterations: 300 / seeds.count, seed: UInt64(index + 1),
                    workDirectory: directory.url)
                total.merge(report)
            }
            print(total)
            XCTAssertTrue(total.passed, total.description)
            XCTAssertGreaterThanOrEqual(total.inputs, 290)
            XCTAssertGreaterThan(total.outcomes.count, 4, "the mutants should reach several of the reader's checks")
        }

        /// Rewrites Tests/Corpus/archive from the fixtures: QUESTBAK_WRITE_CORPUS=1 swift test --filter testWriteCorpus
        func testWriteCorpus() throws {
            guard ProcessInfo.processInfo.environment["QUESTBAK_WRITE_CORPUS"] == "1" else { throw XCTSkip("set QUESTBAK_WRITE_CORPUS=1") }
            let fileManager = FileManager.default
            try fileManager.createDirectory(at: Self.corpus, withIntermediateDirectories: true)
            let directory = try TemporaryTestDirectory()
            for (fixture, compression) in [
                ("v1-typical", ArchiveCompression.zstd), ("v1-typical", .gzip), ("v1-edge-cases", .none), ("v2-typical", .zstd),
            ] {
                let store = directory.path("\(fixture)-\(compression)")
                try fileManager.copyItem(at: Repository.fixtures.appendingPathComponent(fixture), to: store)
                let url = Self.corpus.appendingPathComponent("accepted-\(fixture).\(compression.rawValue).qbak")
                _ = try Exporter.export(
                    storeAt: store.appendingPathComponent("default.store"), to: .file(url, overwrite: true),
                    options: .timeQuest(createdAt: Self.createdAt, compression: compression))
            }
            let bench = try Bench()
            let members = try bench.members()
            try Self.writeArchive(
                try Self.withManifest(members) { $0.files.append($0.files[0]) },
                to: Self.corpus.appendingPathComponent("refused-notAQuestbakArchive-file-listed-twice.qbak"), compression: .zstd)
            var clash = members
            clash.append(Member(path: "entities/ROUTINE.jsonl", data: members.first { $0.path == "entities/Routine.jsonl" }!.data))
            try Self.writeArchive(
                clash, to: Self.corpus.appendingPathComponent("refused-unexpectedMember-case-clash.qbak"), compression: .zstd)
            var escape = members
            escape.insert(Member(path: "entities/\u{1B}[2J.jsonl", data: Data("x\n".utf8)), at: 1)
            try Self.writeArchive(
                escape, to: Self.corpus.appendingPathComponent("refused-unexpectedMember-escape-name.qbak"), compression: .gzip)
            var tar = [UInt8](try Data(contentsOf: try bench.export(.none)))
            let (headers, _) = Self.layout(Data(tar))
            tar[headers[2] + 10] ^= 0x01
            try RawCompression.compress(Data(tar), with: .zstd).write(
                to: Self.corpus.appendingPathComponent("refused-unreadable-damaged-header.qbak"))
        }
    }
#endif
