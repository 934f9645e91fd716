import Crypto
import Foundation

/// What a tar stream holds next, as `ArchiveReader` checks it: a member's header, its bytes (or
/// its lines), the end of its data with its SHA-256, or the error reading it met there.
enum TarPiece {
    /// The next member's header; nil at the archive's end.
    case entry(TarEntry?)
    /// A member's next bytes, as one read of the tar gave them.
    case bytes(Data)
    /// A member of lines: one read of the tar, cut at its newlines.
    case lines(TarLines)
    /// The end of the member's data: the SHA-256 of all of it (hex), and its last line when it
    /// does not end with a newline (a member of lines whose unfinished line was not too long).
    case end(sha256: String, lastLine: Data?)
    /// What reading the tar threw (`TarReadError`), at the point where it threw it.
    case failure(Error)
}

/// One read of a member of lines, as `ArchiveReader.readLines` used to cut it itself.
struct TarLines {
    /// How many of the member's bytes the read gave.
    var count: Int
    /// The lines the read completed, in order, each without its newline.
    var lines: [Data]
    /// Whether the line the read left unfinished is longer than a line may be: the reader
    /// refuses it here unless it refused a line before; the rest of the member is only hashed.
    var unfinishedTooLong: Bool
}

/// Cuts a tar stream into `TarPiece`s: the tar's framing, the decompression under it, each
/// member's SHA-256, and a member of lines cut at its newlines. Whatever it reads or throws it
/// gives as a piece, in the stream's order; `ArchiveReader` makes every check of them, in the
/// order it always made them, on its own thread. The pieces are the same whichever thread cuts
/// them (`TarPieces` on the caller's, or a second core's), so what a read finds or throws is too.
// @unchecked: used by one thread at a time: the owner's until the reading runs ahead (the
// manifest), then only the worker's (`WorkAhead.start` orders the two).
final class TarPieceCutter: @unchecked Sendable {
    private let tar: TarArchiveReader
    /// The members read as lines (their paths), once the manifest has named them, and how long
    /// an unfinished line may grow before it is refused.
    var lineMembers: Set<String> = []
    let lineBytes: Int
    private var member: (path: String, isLines: Bool)?
    private var hasher = SHA256()
    /// A member of lines' unfinished line, carried to the next read.
    private var pending = Data()
    /// The member's unfinished line grew past `lineBytes`: its rest is only hashed.
    private var tooLong = false
    private var atEnd = false
    private var failure: Error?
    private var buffer = [UInt8](repeating: 0, count: TarPieceCutter.lineReadBytes)

    /// The reads a member of lines is cut from (`ArchiveReader.readLines`'s buffer, as it was),
    /// and any other member's (`readAll`'s).
    static let lineReadBytes = 256 * 1024
    static let byteReadBytes = 64 * 1024

    init(_ tar: TarArchiveReader, lineBytes: Int) {
        self.tar = tar
        self.lineBytes = lineBytes
    }

    /// The stream's next piece; after a failure, that failure again.
    func next() -> TarPiece {
        if let failure { return .failure(failure) }
        do {
            return try read()
        } catch {
            failure = error
            return .failure(error)
        }
    }

    private func read() throws -> TarPiece {
        guard let member else {
            // Asked again past the end (a reading ahead), the tar is not read again.
            if atEnd { return .entry(nil) }
            let entry = try tar.nextEntry()
            if let entry {
                self.member = (entry.path, lineMembers.contains(entry.path))
                hasher = SHA256()
                pending = Data()
                tooLong = false
            } else {
                atEnd = true
            }
            return .entry(entry)
        }
        let wanted = member.isLines ? Self.lineReadBytes : Self.byteReadBytes
        let count = try buffer.withUnsafeMutableBytes { try tar.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted])) }
        if count == 0 {
            self.member = nil
            let lastLine = member.isLines && !tooLong && !pending.isEmpty ? pending : nil
            pending = Data()
            return .end(sha256: hasher.finalize().hexString, lastLine: lastLine)
        }
        return buffer.withUnsafeBytes { whole in
            let bytes = UnsafeRawBufferPointer(rebasing: whole[0..<count])
            hasher.update(bufferPointer: bytes)
            guard member.isLines else { return .bytes(Data(bytes)) }
            guard !tooLong else { return .lines(TarLines(count: count, lines: [], unfinishedTooLong: true)) }
            return .lines(cut(bytes))
        }
    }

    /// The lines `bytes` completes, the first one joined to the unfinished line before it.
    private func cut(_ bytes: UnsafeRawBufferPointer) -> TarLines {
        var lines: [Data] = []
        guard let base = bytes.baseAddress else { return TarLines(count: 0, lines: [], unfinishedTooLong: false) }
        var start = 0
        while start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) {
            let newline = base.distance(to: UnsafeRawPointer(found))
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            if pending.isEmpty {
                lines.append(Data(line))
            } else {
                pending.append(contentsOf: line)
                lines.append(pending)
                pending = Data()
            }
            start = newline + 1
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        if pending.count > lineBytes {
            tooLong = true
            pending = Data()
        }
        return TarLines(count: bytes.count, lines: lines, unfinishedTooLong: tooLong)
    }
}

/// A tar stream's pieces in order, for `ArchiveReader`: cut on the calling thread, or, once
/// `readAhead` is called, on a second core a few pieces ahead of it (`WorkAhead`), so that
/// the thread reading the archive (a restore's, where its SQLite transaction is open) spends
/// nothing on decompression, tar framing, hashing and cutting lines. At most `depth` pieces wait
/// beyond the one taken: memory stays flat at any size.
final class TarPieces {
    private let cutter: TarPieceCutter
    private var ahead: WorkAhead<Void, TarPiece>?
    /// How many pieces the worker may have cut beyond the one taken (each at most one read:
    /// 256 KiB of lines).
    static let depth = 4

    init(_ tar: TarArchiveReader, lineBytes: Int) {
        cutter = TarPieceCutter(tar, lineBytes: lineBytes)
    }

    /// Reads on on a second core from here, the members at `lineMembers` cut into lines.
    func readAhead(lineMembers: Set<String>) {
        cutter.lineMembers = lineMembers
        let ahead = WorkAhead<Void, TarPiece>(inputGroup: 1, outputGroup: 1)
        for _ in 0..<Self.depth { ahead.submit(()) }
        let cutter = cutter
        ahead.start { _ in cutter.next() }
        self.ahead = ahead
    }

    /// Cuts the members at `lineMembers` into lines from here, on this thread.
    func readHere(lineMembers: Set<String>) {
        cutter.lineMembers = lineMembers
    }

    /// Ends the worker, if one runs (and waits for it): before the file it reads is closed.
    func stop() {
        ahead?.stop()
    }

    private func next() -> TarPiece {
        guard let ahead else { return cutter.next() }
        let piece = ahead.next()
        ahead.submit(())
        return piece
    }

    /// The next member's header, nil at the archive's end; what is left of the member before it
    /// is passed over (as a tar reader passes over a member's unread data).
    func nextEntry() throws -> TarEntry? {
        while true {
            switch next() {
            case .entry(let entry): return entry
            case .failure(let error): throw error
            case .bytes, .lines, .end: continue
            }
        }
    }

    /// The current member's next piece of data (`.bytes` or `.lines`), or its `.end`.
    func nextData() throws -> TarPiece {
        let piece = next()
        switch piece {
        case .failure(let error): throw error
        case .entry: preconditionFailure("TarPieces: a member's data ended without its end")
        case .bytes, .lines, .end: return piece
        }
    }
}
