import ArgumentParser
import Foundation
import QuestBakKit

/// Where a long command's progress goes: `auto` draws a bar when standard error is a terminal
/// (never under --quiet or --json), `bar` always, `json` writes status lines for a program to
/// read, `none` nothing.
enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
    case auto, bar, json, none
}

struct ProgressOptions: ParsableArguments {
    @Option(
        help: """
            Progress on standard error: auto (a bar on a terminal), bar, none, or json (a status object a line, \
            message_type "status", then one "summary").
            """)
    var progress: ProgressMode = .auto

    /// `quiet` is the command's own silence (--quiet, --json): it turns off `auto` only.
    func reporter(command: String, quiet: Bool) -> ProgressReporter {
        switch progress {
        case .auto: return ProgressReporter(style: !quiet && isatty(STDERR_FILENO) != 0 ? .bar : .none, command: command)
        case .bar: return ProgressReporter(style: .bar, command: command)
        case .json: return ProgressReporter(style: .json, command: command)
        case .none: return ProgressReporter(style: .none, command: command)
        }
    }
}

/// Shows a library operation's `RecordProgress` on standard error: a per-entity bar with counts,
/// rate and (when the total is known) ETA, or restic-style JSON status lines and a summary.
final class ProgressReporter: @unchecked Sendable {
    enum Style { case none, bar, json }

    /// restic's field names: snake case, `message_type` first in meaning.
    struct Status: Encodable {
        var messageType = "status"
        var command: String
        var step: String?
        var entity: String
        var entityDone: Int
        var entityTotal: Int?
        var percentDone: Double?
        var rowsDone: Int
        var rowsPerSecond: Double
        var secondsElapsed: Double
        var secondsRemaining: Double?

        enum CodingKeys: String, CodingKey {
            case messageType = "message_type"
            case command, step, entity
            case entityDone = "entity_done"
            case entityTotal = "entity_total"
            case percentDone = "percent_done"
            case rowsDone = "rows_done"
            case rowsPerSecond = "rows_per_second"
            case secondsElapsed = "seconds_elapsed"
            case secondsRemaining = "seconds_remaining"
        }
    }

    struct Summary: Encodable {
        var messageType = "summary"
        var command: String
        /// Rows done, by entity (by "step entity" when the command has steps).
        var entities: [String: Int]
        var rowsDone: Int
        var secondsElapsed: Double

        enum CodingKeys: String, CodingKey {
            case messageType = "message_type"
            case command, entities
            case rowsDone = "rows_done"
            case secondsElapsed = "seconds_elapsed"
        }
    }

    let style: Style
    let command: String
    private let lock = NSLock()
    private let start = Date()
    private var current: (key: String, since: Date, last: RecordProgress)?
    private var finished: [String: Int] = [:]
    private var lastShown = Date.distantPast
    private var lastShownKey: String?
    private var lastShownRows = -1
    private var drawn = false

    init(style: Style, command: String) {
        self.style = style
        self.command = command
    }

    /// The callback an operation's options take; nil when nothing is shown, so that it costs nothing.
    var callback: ((RecordProgress) -> Void)? { style == .none ? nil : { [self] in update($0) } }

    func update(_ progress: RecordProgress) {
        lock.lock()
        defer { lock.unlock() }
        let key = progress.step.map { "\($0) \(progress.entity)" } ?? progress.entity
        if current?.key != key {
            if let current { end(current.key, current.last) }
            current = (key, Date(), progress)
        }
        current?.last = progress
        let now = Date()
        // A few lines a second at most, but every entity's first and last count.
        let isLast = progress.rowsTotal.map { progress.rowsDone >= $0 } ?? false
        guard lastShownKey != key || isLast || now.timeIntervalSince(lastShown) >= (style == .json ? 1 : 0.1) else { return }
        show(progress, key: key, now: now)
    }

    /// The summary (JSON), or the bar cleared; call once the operation has succeeded.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if let current { end(current.key, current.last) }
        current = nil
        switch style {
        case .none: return
        case .bar:
            if drawn { write("\r\u{1B}[K") }
            drawn = false
        case .json:
            let summary = Summary(
                command: command, entities: finished, rowsDone: finished.values.reduce(0, +),
                secondsElapsed: Self.rounded(Date().timeIntervalSince(start)))
            writeJSON(summary)
        }
    }

    /// Clears the bar so that the command can print a line of its own; the next update draws it again.
    func clearBar() {
        lock.lock()
        defer { lock.unlock() }
        guard style == .bar, drawn else { return }
        write("\r\u{1B}[K")
        drawn = false
        lastShownKey = nil
    }

    /// Clears the bar when the command fails (no summary).
    func abandon() {
        lock.lock()
        defer { lock.unlock() }
        if style == .bar, drawn { write("\r\u{1B}[K") }
        drawn = false
    }

    private func end(_ key: String, _ last: RecordProgress) {
        if lastShownKey != key || lastShownRows != last.rowsDone { show(last, key: key, now: Date()) }
        finished[key] = last.rowsDone
    }

    private func show(_ progress: RecordProgress, key: String, now: Date) {
        lastShown = now
        lastShownKey = key
        lastShownRows = progress.rowsDone
        let since = current?.key == key ? current!.since : now
        let seconds = max(now.timeIntervalSince(since), 0.001)
        let rate = Double(progress.rowsDone) / seconds
        let remaining = progress.rowsTotal.flatMap { total in rate > 0 ? Double(max(total - progress.rowsDone, 0)) / rate : nil }
        switch style {
        case .none: return
        case .json:
            let doneBefore = finished.filter { $0.key != key }.values.reduce(0, +)
            writeJSON(
                Status(
                    command: command, step: progress.step, entity: progress.entity, entityDone: progress.rowsDone,
                    entityTotal: progress.rowsTotal,
                    percentDone: progress.rowsTotal.map { $0 == 0 ? 1 : Self.rounded(Double(progress.rowsDone) / Double($0)) },
                    rowsDone: doneBefore + progress.rowsDone, rowsPerSecond: Self.rounded(rate),
                    secondsElapsed: Self.rounded(now.timeIntervalSince(start)), secondsRemaining: remaining.map(Self.rounded)))
        case .bar:
            var line = key
            if let total = progress.rowsTotal {
                let width = 30
                let filled = total == 0 ? width : min(width, width * progress.rowsDone / total)
                line += " [" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
                line += " \(progress.rowsDone)/\(total)"
            } else {
                line += " \(progress.rowsDone)"
            }
            line += " \(Int(rate.rounded()))/s"
            if let remaining { line += " ETA " + Self.clock(remaining) }
            write("\r\u{1B}[K" + line)
            drawn = true
        }
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    private func writeJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        FileHandle.standardError.write(data + Data("\n".utf8))
    }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }
}
