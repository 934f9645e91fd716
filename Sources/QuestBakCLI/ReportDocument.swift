import Foundation
import QuestBakKit

/// The JSON report: the summary's keys, then `entries`, one repair-log entry a line. Streamed in
/// chunks, never held whole: a merge of a million records logs millions of entries.
enum ReportDocument {
    static func stream<Summary: Encodable>(summary: Summary, logs: [RepairLog], to output: FileHandle) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var buffer = try encoder.encode(summary)
        buffer.removeLast()  // the closing brace: the entries follow
        buffer.append(Data(",\"entries\":[".utf8))
        var first = true
        for log in logs {
            try log.forEachEntryLine { line in
                buffer.append(Data(((first ? "\n" : ",\n") + line).utf8))
                first = false
                if buffer.count >= 1 << 20 {
                    try output.write(contentsOf: buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        }
        buffer.append(Data("\n]}\n".utf8))
        try output.write(contentsOf: buffer)
    }

    /// The report's file, opened before the command's work: a path it cannot be written to then
    /// stops the command before anything is changed, not after (with the backup's name unsaid).
    static func open(_ report: String?) throws -> AtomicOutputFile? {
        try report.map { try AtomicOutputFile(destination: URL(fileURLWithPath: $0), overwrite: true) }
    }

    /// Writes the report to `file` (committed atomically) and to standard output when `json`.
    static func emit<Summary: Encodable>(summary: Summary, log: RepairLog, to file: AtomicOutputFile?, json: Bool) throws {
        try emit(summary: summary, logs: [log], to: file, json: json)
    }

    /// The same, with the entries of several logs in order (a migration chain's steps).
    static func emit<Summary: Encodable>(summary: Summary, logs: [RepairLog], to file: AtomicOutputFile?, json: Bool) throws {
        if let file {
            try stream(summary: summary, logs: logs, to: FileHandle(fileDescriptor: file.fileDescriptor, closeOnDealloc: false))
            try file.commit()
        }
        if json { try stream(summary: summary, logs: logs, to: FileHandle.standardOutput) }
    }
}
