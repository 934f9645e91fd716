import ArgumentParser
import Foundation

/// "Did you mean …?" for a mistyped subcommand or option, checked before argument-parser sees
/// the arguments: it reports `--ouput` as a missing `--output` and `expor` as two unexpected
/// arguments, neither of which points at the typo.
enum Suggestions {
    /// The message for the first mistyped word in `arguments` (without the program name), if any.
    static func message(for arguments: [String], root: ParsableCommand.Type = Questbak.self) -> String? {
        let subcommands = root.configuration.subcommands
        // `help COMMAND` names a command too (argument-parser shows the overview for one it lacks).
        if arguments.first == "help" { return arguments.count == 2 ? message(for: [arguments[1]], root: root) : nil }
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        guard var command = subcommands.first(where: { $0._commandName == first }) else {
            let names = subcommands.map { $0._commandName }
            let close = closest(to: first, in: names)
            return "unknown command '\(first)'"
                + (close.map { "; did you mean '\($0)'?" } ?? "; the commands are \(names.joined(separator: ", "))")
        }
        // A command with subcommands of its own (`fixtures add`): the options are the subcommand's.
        var rest = arguments.dropFirst()
        while let next = rest.first, let inner = command.configuration.subcommands.first(where: { $0._commandName == next }) {
            command = inner
            rest = rest.dropFirst()
        }
        // The command's long options, as its own help lists them, and the ones every command has.
        let help = command.helpMessage(columns: 10_000)
        var known: Set<String> = ["--help", "--version", "--generate-completion-script"]
        var index = help.startIndex
        while let range = help.range(of: #"--[a-z][a-z0-9-]*"#, options: .regularExpression, range: index..<help.endIndex) {
            known.insert(String(help[range]))
            index = range.upperBound
        }
        for argument in rest {
            if argument == "--" { break }
            guard argument.hasPrefix("--"), let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init),
                name.count > 2, !known.contains(name)
            else { continue }
            // A word another tool uses for what this command calls otherwise comes before spelling.
            let meant = synonyms[name]?.first(where: known.contains) ?? closest(to: name, in: known.sorted())
            guard let meant else { return nil }
            return "unknown option '\(name)'; did you mean '\(meant)'?"
        }
        return nil
    }

    /// Options people carry over from other tools (and from `export`), with what each command
    /// that lacks them calls the same intent, in order of preference: `import --force` means to
    /// replace the store, `migrate --force` to migrate it in place.
    static let synonyms: [String: [String]] = [
        "--force": ["--replace", "--in-place"],
        "--overwrite": ["--force", "--replace", "--in-place"],
    ]

    /// The argument parser's message as one of questbak's: a sentence that starts in lower case
    /// ("Missing expected argument" becomes "missing expected argument"; an acronym is kept).
    static func sentence(_ message: String) -> String {
        guard let first = message.first, first.isUppercase, message.dropFirst().first?.isLowercase == true else { return message }
        return first.lowercased() + message.dropFirst()
    }

    /// The nearest name within a few edits, if one is near enough to be what was meant.
    static func closest(to word: String, in names: [String]) -> String? {
        let scored = names.map { (name: $0, distance: distance(word, $0)) }.min { $0.distance < $1.distance }
        guard let scored, scored.distance <= max(2, word.count / 3) else { return nil }
        return scored.name
    }

    /// Levenshtein distance.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
