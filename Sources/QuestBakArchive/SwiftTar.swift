import CoreDataStore
import Foundation

/// Tar in Swift, for builds without libarchive (an app on iOS): the headers questbak writes, a
/// writer, and a reader of what questbak, GNU tar and bsdtar write in POSIX (pax) format.
///
/// The headers are libarchive's "restricted pax" headers byte for byte (its
/// archive_write_set_format_pax_restricted and ustar formatter): a plain ustar header when the
/// name and numbers fit, a pax extended header before it (named `<dir>/PaxHeader/<name>`) when
/// they do not. So the tar an export writes is the same with or without libarchive, which
/// `TarFormatTests` checks against libarchive itself.
package enum TarFormat {
    package static let blockSize = 512
    /// The largest size a ustar header holds in standard octal (8 GiB - 1); past it, a pax `size`.
    static let largestUstarSize: Int64 = (1 << 33) - 1
    /// Where libarchive 3.6 (Debian 12's, which wrote questbak's archives so far) stops writing
    /// times in ustar's field alone and adds a pax `mtime`: 2038. Later libarchive moved it to
    /// 2^33 - 1; the two agree on every time before 2038.
    static let largestUstarTime: Int64 = 0x7FFF_FFFF

    /// The header (pax extended header where needed, then ustar) of a regular file of `size`
    /// bytes at `path`: mode 0644, owner 0:0, modified at `modificationTime`.
    package static func header(path: String, size: Int64, modificationTime: Int) -> Data {
        let name = Array(path.utf8)
        let time = Int64(modificationTime)
        var attributes: [(key: String, value: [UInt8])] = []
        var ustarName = name
        var needsExtension = false
        if !name.allSatisfy({ $0 < 0x80 }) || !fitsUstarName(name) {
            attributes.append(("path", name))
            ustarName = ustarEntryName(name, insert: nil)
            needsExtension = true
        }
        if size > largestUstarSize { needsExtension = true }
        let timeOutOfRange = time < 0 || time >= largestUstarTime
        if timeOutOfRange { needsExtension = true }
        if needsExtension && timeOutOfRange { attributes.append(("mtime", Array(String(time).utf8))) }
        if size > largestUstarSize { attributes.append(("size", Array(String(size).utf8))) }

        var output = Data()
        if !attributes.isEmpty {
            let body = attributes.flatMap { paxRecord(key: $0.key, value: $0.value) }
            let clippedTime = min(max(time, 0), largestUstarTime)
            output.append(
                contentsOf: ustarBlock(
                    name: paxAttributeName(ustarName), size: Int64(body.count), modificationTime: clippedTime, typeflag: UInt8(ascii: "x"),
                    strict: true))
            output.append(contentsOf: body)
            output.append(Data(count: padding(after: Int64(body.count))))
        }
        output.append(
            contentsOf: ustarBlock(name: ustarName, size: size, modificationTime: time, typeflag: UInt8(ascii: "0"), strict: false))
        return output
    }

    /// The zero bytes that bring `size` bytes to a whole block.
    package static func padding(after size: Int64) -> Int { Int((512 - size % 512) % 512) }

    /// Whether an ASCII name fits ustar's name field, or its prefix and name fields split at a '/'.
    private static func fitsUstarName(_ name: [UInt8]) -> Bool {
        name.count <= 100 || ustarSplit(name) != nil
    }

    /// Where ustar splits a name longer than 100 bytes: the '/' that leaves at most 100 bytes
    /// after it and a non-empty prefix of at most 155 before it, searching from the left.
    private static func ustarSplit(_ name: [UInt8]) -> Int? {
        let slash = UInt8(ascii: "/")
        var split = name[(name.count - 100 - 1)...].firstIndex(of: slash)
        if split == 0 { split = name[1...].firstIndex(of: slash) }
        guard let split, split + 1 < name.count, split <= 155 else { return nil }
        return split
    }

    /// libarchive's `build_ustar_entry_name`: a name for the ustar header when the real one is in
    /// a pax record, cut to fit (prefix, then as much of the directory and file name as fits),
    /// with `insert` ("PaxHeader") added as a last directory.
    private static func ustarEntryName(_ source: [UInt8], insert: [UInt8]?) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        if source.count < 100 && insert == nil { return source }
        var suffixLength = 98
        let insertLength = insert.map { $0.count + 2 } ?? 0
        var filenameEnd = source.count
        var needSlash = false
        while true {
            if filenameEnd > 0 && source[filenameEnd - 1] == slash {
                filenameEnd -= 1
                needSlash = true
                continue
            }
            if filenameEnd > 1 && source[filenameEnd - 1] == UInt8(ascii: ".") && source[filenameEnd - 2] == slash {
                filenameEnd -= 2
                needSlash = true
                continue
            }
            break
        }
        if filenameEnd == 0 { return (insert ?? []) + [slash] }
        if needSlash { suffixLength -= 1 }
        var filename = filenameEnd - 1
        while filename > 0 && source[filename] != slash { filename -= 1 }
        if source[filename] == slash && filename < filenameEnd - 1 { filename += 1 }
        suffixLength -= insertLength
        if filenameEnd > filename + suffixLength { filenameEnd = filename + suffixLength }
        suffixLength -= filenameEnd - filename

        var prefixEnd = min(154, filename)
        while prefixEnd > 0 && source[prefixEnd] != slash { prefixEnd -= 1 }
        if prefixEnd < filename && source[prefixEnd] == slash { prefixEnd += 1 }

        let suffix = prefixEnd
        var suffixEnd = suffix + suffixLength
        if suffixEnd > filename { suffixEnd = filename }
        if suffixEnd < suffix { suffixEnd = suffix }
        while suffixEnd > suffix && source[suffixEnd] != slash { suffixEnd -= 1 }
        if suffixEnd < filename && source[suffixEnd] == slash { suffixEnd += 1 }

        var result = Array(source[0..<prefixEnd]) + source[suffix..<suffixEnd]
        if let insert { result += insert + [slash] }
        result += source[filename..<filenameEnd]
        if needSlash { result.append(slash) }
        return result
    }

    /// libarchive's `build_pax_attribute_name`: `<dir>/PaxHeader/<name>`, cut to fit ustar.
    private static func paxAttributeName(_ name: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        if name.isEmpty { return Array("PaxHeader/blank".utf8) }
        var end = name.count
        while true {
            if end > 0 && name[end - 1] == slash {
                end -= 1
                continue
            }
            if end > 1 && name[end - 1] == UInt8(ascii: ".") && name[end - 2] == slash {
                end -= 1
                continue
            }
            break
        }
        if end == 0 { return Array("/PaxHeader/rootdir".utf8) }
        if name[0] == UInt8(ascii: ".") && end == 1 { return Array("PaxHeader/currentdir".utf8) }
        return ustarEntryName(Array(name[0..<end]), insert: Array("PaxHeader".utf8))
    }

    /// One pax record, `<length> <key>=<value>\n`, its length counting its own digits.
    private static func paxRecord(key: String, value: [UInt8]) -> [UInt8] {
        let length = 1 + key.utf8.count + 1 + value.count + 1
        var digits = 0
        var nextTen = 1
        var rest = length
        while rest > 0 {
            rest /= 10
            digits += 1
            nextTen *= 10
        }
        if length + digits >= nextTen { digits += 1 }
        return Array("\(length + digits) \(key)=".utf8) + value + [UInt8(ascii: "\n")]
    }

    /// A ustar header block as libarchive formats it: its template's field terminators, octal
    /// numbers (past a field's width: one more digit over the terminator, then base-256, unless
    /// `strict`), and the checksum as six octal digits, a NUL and a space.
    private static func ustarBlock(name: [UInt8], size: Int64, modificationTime: Int64, typeflag: UInt8, strict: Bool) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) { block.replaceSubrange(offset..<offset + text.utf8.count, with: Array(text.utf8)) }
        put("000000 ", at: 100)  // mode
        put("000000 ", at: 108)  // uid
        put("000000 ", at: 116)  // gid
        put("00000000000 ", at: 124)  // size
        put("00000000000 ", at: 136)  // mtime
        put("        ", at: 148)  // checksum, spaces while summing
        put("ustar", at: 257)
        put("00", at: 263)
        put("000000 ", at: 329)  // devmajor
        put("000000 ", at: 337)  // devminor
        if name.count <= 100 {
            block.replaceSubrange(0..<name.count, with: name)
        } else if let split = ustarSplit(name) {
            block.replaceSubrange(345..<345 + split, with: name[0..<split])
            block.replaceSubrange(0..<name.count - split - 1, with: name[(split + 1)...])
        }
        func number(_ value: Int64, at offset: Int, width: Int, maximumWidth: Int) {
            if strict {
                octal(value, at: offset, width: width)
                return
            }
            var width = width
            var limit: Int64 = 1 << (width * 3)
            if value >= 0 {
                while width <= maximumWidth {
                    if value < limit {
                        octal(value, at: offset, width: width)
                        return
                    }
                    width += 1
                    limit <<= 3
                }
            }
            var rest = value
            for index in stride(from: offset + maximumWidth - 1, through: offset, by: -1) {
                block[index] = UInt8(truncatingIfNeeded: rest)
                rest >>= 8
            }
            block[offset] |= 0x80
        }
        func octal(_ value: Int64, at offset: Int, width: Int) {
            var rest = max(value, 0)
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                block[index] = UInt8(ascii: "0") + UInt8(rest & 7)
                rest >>= 3
            }
        }
        number(0o644, at: 100, width: 6, maximumWidth: 8)
        number(0, at: 108, width: 6, maximumWidth: 8)
        number(0, at: 116, width: 6, maximumWidth: 8)
        number(size, at: 124, width: 11, maximumWidth: 12)
        number(modificationTime, at: 136, width: 11, maximumWidth: 11)
        block[156] = typeflag
        let checksum = block.reduce(0) { $0 + Int64($1) }
        block[148 + 6] = 0
        octal(checksum, at: 148, width: 6)
        return block
    }
}

/// Writes a tar stream to a file descriptor through a codec, as frames of at most
/// `FramedTar.blockSize` bytes: what the fuzzer and the tests build archives with. `export`
/// writes its frames itself (`FramedTar`); both hold the same tar.
package final class SwiftTarWriter {
    private let descriptor: Int32
    private let compressor: FrameCompressor?
    private let modificationTime: Int
    private var pending: [UInt8] = []
    private var finished = false

    /// `modificationTime` (Unix seconds) is stamped on every member, so equal inputs give equal bytes.
    package init(fileDescriptor: Int32, compression: ArchiveCompression, modificationTime: Int) throws {
        descriptor = fileDescriptor
        compressor = try makeFrameCompressor(compression, path: "archive")
        self.modificationTime = modificationTime
        pending.reserveCapacity(FramedTar.blockSize)
    }

    /// Adds a regular file of exactly `size` bytes whose contents `produce` writes through `write`.
    package func addFile(path: String, size: Int64, produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard !finished else { throw StoreError.io(path: path, reason: "archive already closed") }
        try append(TarFormat.header(path: path, size: size, modificationTime: modificationTime))
        var written: Int64 = 0
        try produce { chunk in
            try self.append(chunk)
            written += Int64(chunk.count)
        }
        guard written == size else {
            throw StoreError.io(path: path, reason: "wrote \(written) bytes, announced \(size)")
        }
        try append(Data(count: TarFormat.padding(after: size)))
    }

    package func addFile(path: String, data: Data) throws {
        try addFile(path: path, size: Int64(data.count)) { write in try data.withUnsafeBytes { try write($0) } }
    }

    /// Writes the tar's end and the last frame; the archive is incomplete until this returns.
    package func finish() throws {
        guard !finished else { return }
        try append(FramedTar.trailer)
        try flush()
        finished = true
    }

    private func append(_ data: Data) throws { try data.withUnsafeBytes { try append($0) } }

    private func append(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let count = min(FramedTar.blockSize - pending.count, bytes.count - offset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
            offset += count
            if pending.count == FramedTar.blockSize { try flush() }
        }
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        try pending.withUnsafeBytes { block in
            if let compressor {
                let frame = try compressor.frame(block)
                try frame.withUnsafeBytes { try FramedTar.writeAll(descriptor, $0, path: "archive") }
            } else {
                try FramedTar.writeAll(descriptor, block, path: "archive")
            }
        }
        pending.removeAll(keepingCapacity: true)
    }
}

/// A member's header as a tar reader gives it.
package struct TarEntry {
    package var path: String
    /// The size the tar header declares.
    package var size: Int64
    package var isRegularFile: Bool
    /// For links: where they point; such entries are refused by the callers.
    package var linkTarget: String?
}

/// What reading a tar stream failed on, from either reader (libarchive's or `SwiftTarReader`).
package struct TarReadError: Error, LocalizedError {
    package var operation: String
    package var message: String
    /// Where in the archive reading failed ("in member entities/Routine.jsonl"); nil when the
    /// failure is not about one place.
    package var location: String?
    /// The codec the stream needs and this build leaves out ("zstd").
    package var missingCodec: String?
    /// The stream is not a tar at all (the first header is not one).
    package var isUnrecognizedFormat: Bool

    package var errorDescription: String? { "\(operation): \(message)" }

    package init(
        operation: String, message: String, location: String? = nil, missingCodec: String? = nil, isUnrecognizedFormat: Bool = false
    ) {
        self.operation = operation
        self.message = message
        self.location = location
        self.missingCodec = missingCodec
        self.isUnrecognizedFormat = isUnrecognizedFormat
    }
}

/// Reads a tar stream (zstd, gzip or uncompressed) member by member: ustar and pax headers
/// (`path`, `linkpath` and `size` records; global headers are read and ignored), GNU long names,
/// base-256 sizes. Every header's checksum is checked; a stream that ends inside a header or a
/// member's data is an error; a pax header is refused past `maximumExtendedHeaderBytes`.
/// Links, directories and devices are reported as such for the caller to refuse.
package final class SwiftTarReader {
    package typealias Entry = TarEntry

    /// Far more than any path needs; a header that claims more is hostile.
    package static let maximumExtendedHeaderBytes: Int64 = 1 << 20

    private let input: DecompressingInput
    private var remaining: Int64 = 0
    private var paddingAfter = 0
    private var currentPath: String?
    private var sawHeader = false
    private var ended = false

    package init(fileDescriptor: Int32) throws {
        input = DecompressingInput(fileDescriptor: fileDescriptor)
    }

    /// The next member's header, or `nil` at the end of the archive.
    package func nextEntry() throws -> Entry? {
        if ended { return nil }
        try skip(remaining + Int64(paddingAfter))
        remaining = 0
        paddingAfter = 0
        var paxPath: String?
        var paxLink: String?
        var paxSize: Int64?
        var longName: String?
        var longLink: String?
        while true {
            guard let block = try readBlock() else {
                ended = true
                return nil
            }
            if block.allSatisfy({ $0 == 0 }) {
                ended = true
                try drain()
                return nil
            }
            guard Self.checksumMatches(block) else {
                if !sawHeader {
                    throw TarReadError(operation: "open archive", message: "Unrecognized archive format", isUnrecognizedFormat: true)
                }
                throw damage("Damaged tar archive (a header's checksum is wrong)")
            }
            sawHeader = true
            let typeflag = block[156]
            guard let declared = Self.number(block[124..<136]), declared >= 0 else {
                throw damage("Damaged tar archive (a header's size is not a number)")
            }
            switch typeflag {
            case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K"):
                guard declared <= Self.maximumExtendedHeaderBytes else {
                    throw damage(
                        "an extended header of \(declared) bytes, more than the \(Self.maximumExtendedHeaderBytes) a reader accepts")
                }
                let body = try readExactly(Int(declared))
                try skip(Int64(TarFormat.padding(after: declared)))
                if typeflag == UInt8(ascii: "L") || typeflag == UInt8(ascii: "K") {
                    let text = String(decoding: body.prefix { $0 != 0 }, as: UTF8.self)
                    if typeflag == UInt8(ascii: "L") { longName = text } else { longLink = text }
                    continue
                }
                let records = try parsePax(body)
                // A global header's values are defaults for what follows; questbak's archives
                // have none, and a path or size set for every member is not one it would read.
                guard typeflag == UInt8(ascii: "x") else { continue }
                for (key, value) in records {
                    switch key {
                    case "path": paxPath = value
                    case "linkpath": paxLink = value
                    case "size":
                        guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit), let size = Int64(value) else {
                            throw damage("Damaged tar archive (a pax size is not a number)")
                        }
                        paxSize = size
                    default: break
                    }
                }
                continue
            default:
                break
            }
            let path = paxPath ?? longName ?? Self.ustarPath(block)
            currentPath = path
            let size = paxSize ?? declared
            let isLink = typeflag == UInt8(ascii: "1") || typeflag == UInt8(ascii: "2")
            let link = isLink ? (paxLink ?? longLink ?? Self.text(block[157..<257])) : nil
            let isRegular = [0, UInt8(ascii: "0"), UInt8(ascii: "7")].contains(typeflag)
            // Only regular files have data here; a link, directory or device that claims some
            // is refused by the caller before its bytes matter.
            remaining = isRegular ? size : 0
            paddingAfter = isRegular ? TarFormat.padding(after: size) : 0
            return Entry(path: path, size: size, isRegularFile: isRegular && link == nil, linkTarget: link)
        }
    }

    /// Reads the current member's next bytes into `buffer`; 0 at its end.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard remaining > 0, buffer.count > 0 else { return 0 }
        let wanted = Int(min(Int64(buffer.count), remaining))
        let count = try located { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])) }
        guard count > 0 else {
            throw TarReadError(
                operation: "read member data", message: "Truncated tar archive",
                location: currentPath.map { "in member \(UntrustedText.display($0))" })
        }
        remaining -= Int64(count)
        return count
    }

    private var location: String {
        currentPath.map { "after member \(UntrustedText.display($0))" } ?? "at the first member"
    }

    private func damage(_ message: String) -> TarReadError {
        TarReadError(operation: "read member header", message: message, location: location)
    }

    /// Decompression errors, given the place in the archive where they happened.
    private func located<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as TarReadError {
            if error.location == nil && error.missingCodec == nil {
                error.location = remaining > 0 ? currentPath.map { "in member \(UntrustedText.display($0))" } : location
            }
            throw error
        }
    }

    /// A whole block, nil at the end of the stream; a partial one is a truncated archive.
    private func readBlock() throws -> [UInt8]? {
        var block = [UInt8](repeating: 0, count: TarFormat.blockSize)
        var filled = 0
        while filled < block.count {
            let count = try located {
                try block.withUnsafeMutableBytes { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            }
            if count == 0 { break }
            filled += count
        }
        if filled == 0 { return nil }
        guard filled == block.count else {
            if !sawHeader {
                throw TarReadError(operation: "open archive", message: "Unrecognized archive format", isUnrecognizedFormat: true)
            }
            throw damage("Truncated tar archive")
        }
        return block
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = try located {
                try bytes.withUnsafeMutableBytes { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            }
            guard read > 0 else { throw damage("Truncated tar archive") }
            filled += read
        }
        return bytes
    }

    private func skip(_ count: Int64) throws {
        var left = count
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        while left > 0 {
            let wanted = Int(min(Int64(scratch.count), left))
            let read = try located {
                try scratch.withUnsafeMutableBytes { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted])) }
            }
            guard read > 0 else {
                throw TarReadError(
                    operation: "read member data", message: "Truncated tar archive",
                    location: currentPath.map { "in member \(UntrustedText.display($0))" })
            }
            left -= Int64(read)
        }
    }

    /// Reads on past the tar's end to the end of the compressed stream, so that a stream cut
    /// short or damaged there (its last frame's checksum) is still an error. What follows the end
    /// is zero blocks (GNU tar pads to 10 KiB), so a little is enough; more is left unread.
    private func drain() throws {
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        for _ in 0..<16 {
            if try located({ try scratch.withUnsafeMutableBytes { try input.read(into: $0) } }) == 0 { return }
        }
    }

    /// `<length> <key>=<value>\n` records; anything else is damage.
    private func parsePax(_ body: [UInt8]) throws -> [(String, String)] {
        var records: [(String, String)] = []
        var offset = 0
        while offset < body.count {
            // A header padded with NULs after its last record (some writers do) ends there.
            if body[offset] == 0 { break }
            guard let space = body[offset...].prefix(20).firstIndex(of: UInt8(ascii: " ")),
                let length = Int(String(decoding: body[offset..<space], as: UTF8.self)), length > space - offset + 1,
                offset + length <= body.count, body[offset + length - 1] == UInt8(ascii: "\n"),
                let equals = body[(space + 1)..<(offset + length - 1)].firstIndex(of: UInt8(ascii: "=")), equals > space + 1
            else {
                throw damage("Damaged tar archive (a malformed pax record)")
            }
            let key = String(decoding: body[(space + 1)..<equals], as: UTF8.self)
            let value = String(decoding: body[(equals + 1)..<(offset + length - 1)], as: UTF8.self)
            records.append((key, value))
            offset += length
        }
        return records
    }

    /// The header's checksum, summed as unsigned bytes (POSIX) or signed ones (old Unix tars).
    private static func checksumMatches(_ block: [UInt8]) -> Bool {
        guard let stored = number(block[148..<156]) else { return false }
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (index, byte) in block.enumerated() {
            let value = (148..<156).contains(index) ? UInt8(ascii: " ") : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }

    /// A numeric field: octal digits between optional spaces and NULs, or base-256 (high bit set).
    private static func number(_ field: ArraySlice<UInt8>) -> Int64? {
        if let first = field.first, first & 0x80 != 0 {
            // Base-256, positive only here: at most 63 bits of value.
            guard first & 0x40 == 0 else { return nil }
            var value: Int64 = Int64(first & 0x3F)
            for byte in field.dropFirst() {
                guard value <= (Int64.max >> 8) else { return nil }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        let digits = field.drop { $0 == UInt8(ascii: " ") }.prefix { $0 != 0 && $0 != UInt8(ascii: " ") }
        guard !digits.isEmpty else { return field.allSatisfy { $0 == 0 || $0 == UInt8(ascii: " ") } ? 0 : nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "7"), value <= (Int64.max >> 3) else { return nil }
            value = value << 3 | Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func text(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The name, with ustar's prefix before it when there is one.
    private static func ustarPath(_ block: [UInt8]) -> String {
        let name = text(block[0..<100])
        let isUstar = block[257..<262].elementsEqual("ustar".utf8)
        let prefix = isUstar ? text(block[345..<500]) : ""
        return prefix.isEmpty ? name : prefix + "/" + name
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

// Which reader and writer the archive code uses. Writing: `SwiftTarWriter` in every build (one
// writer; `TarFormatTests` proves its tar is libarchive's byte for byte). Reading: libarchive in
// the default build (the reader the fuzz campaign and the hostile-archive suite were run
// against), `SwiftTarReader` without it; `TarFormatTests` runs the Swift reader in both builds.
#if SystemArchive
    package typealias TarArchiveReader = LibArchiveTarReader
#else
    package typealias TarArchiveReader = SwiftTarReader
#endif
package typealias TarArchiveWriter = SwiftTarWriter
