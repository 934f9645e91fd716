import Foundation
import QuestBakFixtures
import QuestBakKit

// questbak-fuzz: mutation fuzzing of the archive reader and import (ArchiveFuzzer), for long campaigns.
//
//   swift run -c release questbak-fuzz [--mode bytes|values|both] [--iterations N] [--seed S]
//       [--time-limit SECONDS] [--work DIR] [--verbose] [SEED.qbak …]
//
// Modes: `bytes` damages the bytes of each seed (compressed stream or tar) and reads the mutant;
// `values` puts hostile values into well-formed records and metadata.plist of each seed the
// reader accepts, rewrites the archive with correct sizes, checksums and counts, imports it, and
// exports what an accepted import wrote to check that the changed value came back unchanged;
// `both` (the default) runs one after the other and reports each.
//
// N mutants per seed archive and mode (default 2500); seeds default to Tests/Corpus/archive/*.qbak.
// Exits 0 when every input ended in time with a typed error or was accepted (and, in values mode,
// came back unchanged), 1 otherwise. A crash or hang leaves the input that caused it at
// DIR/input.qbak; values-mode failures are kept as DIR/failed-values-SEED-N.qbak, and every
// problem is listed in DIR/problems-MODE.txt. --verbose also lists some accepted mutants, to see
// which damage passes unnoticed, and the first input of each outcome with its message.

var iterations = 2500
var seed: UInt64 = 1
var timeLimit = 2.0
var work: URL?
var verbose = false
var modes: [ArchiveFuzzer.Mode] = ArchiveFuzzer.Mode.allCases
var seeds: [URL] = []
var arguments = CommandLine.arguments.dropFirst()
@MainActor func value(_ name: String) -> String {
    guard let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("questbak-fuzz: \(name) needs a value\n".utf8))
        exit(64)
    }
    return value
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--iterations": iterations = Int(value(argument)) ?? iterations
    case "--seed": seed = UInt64(value(argument)) ?? seed
    case "--time-limit": timeLimit = Double(value(argument)) ?? timeLimit
    case "--work": work = URL(fileURLWithPath: value(argument))
    case "--verbose": verbose = true
    case "--mode":
        let name = value(argument)
        if name == "both" {
            modes = ArchiveFuzzer.Mode.allCases
        } else if let mode = ArchiveFuzzer.Mode(rawValue: name) {
            modes = [mode]
        } else {
            FileHandle.standardError.write(Data("questbak-fuzz: --mode is bytes, values or both, not \(name)\n".utf8))
            exit(64)
        }
    case "-h", "--help":
        print(
            "usage: questbak-fuzz [--mode bytes|values|both] [--iterations N] [--seed S] [--time-limit SECONDS] [--work DIR] [--verbose] [SEED.qbak …]"
        )
        exit(0)
    default: seeds.append(URL(fileURLWithPath: argument))
    }
}
if seeds.isEmpty {
    let corpus = URL(fileURLWithPath: "Tests/Corpus/archive")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []
    seeds = names.filter { $0.hasSuffix(".qbak") }.sorted().map { corpus.appendingPathComponent($0) }
}
guard !seeds.isEmpty else {
    FileHandle.standardError.write(Data("questbak-fuzz: no seed archives (run from the package root, or name some)\n".utf8))
    exit(66)
}
let directory =
    work ?? FileManager.default.temporaryDirectory.appendingPathComponent("questbak-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    print("work directory: \(directory.path)")
    var totals: [(mode: ArchiveFuzzer.Mode, report: ArchiveFuzzer.Report)] = []
    for mode in modes {
        var total = ArchiveFuzzer.Report()
        for (index, archive) in seeds.enumerated() {
            let seedValue = seed &+ UInt64(index)
            let report: ArchiveFuzzer.Report
            switch mode {
            case .bytes:
                report = try ArchiveFuzzer.run(
                    seedArchive: archive, iterations: iterations, seed: seedValue, workDirectory: directory, timeLimit: timeLimit)
            case .values:
                report = try ArchiveFuzzer.runValues(
                    seedArchive: archive, iterations: iterations, seed: seedValue, workDirectory: directory, timeLimit: timeLimit)
                if !report.skippedSeeds.isEmpty {
                    print("[values] \(archive.lastPathComponent): skipped (the reader refuses it; no values to change)")
                    total.merge(report)
                    continue
                }
            }
            print(
                "[\(mode.rawValue)] \(archive.lastPathComponent): \(report.inputs) inputs, slowest \(String(format: "%.3f", report.slowestSeconds)) s\(report.passed ? "" : ", FAILED")"
            )
            total.merge(report)
        }
        print("== mode \(mode.rawValue) ==")
        print(total)
        // Every problem, not only the first 20 the summary shows.
        let listing = directory.appendingPathComponent("problems-\(mode.rawValue).txt")
        let lines =
            total.badErrors.map { "BAD: \($0)" } + total.silentChanges.map { "CHANGED: \($0)" }
            + total.slowInputs.map { "SLOW: \($0)" } + total.questionable.map { "QUESTIONABLE: \($0)" }
        if !lines.isEmpty {
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: listing)
            print("all \(lines.count) problems listed in \(listing.path)")
        }
        if verbose {
            for sample in total.acceptedSamples { print("accepted: \(sample)") }
            for (outcome, example) in total.examples.sorted(by: { $0.key < $1.key }) { print("first \(outcome): \(example)") }
        }
        totals.append((mode, total))
    }
    if totals.count > 1 {
        print("== summary ==")
        for (mode, report) in totals {
            print(
                "\(mode.rawValue): \(report.inputs) inputs in \(String(format: "%.1f", report.totalSeconds)) s, slowest \(String(format: "%.3f", report.slowestSeconds)) s, bad errors \(report.badErrors.count), silent changes \(report.silentChanges.count), slow \(report.slowInputs.count): \(report.passed ? "PASS" : "FAIL")"
            )
        }
    }
    exit(totals.allSatisfy { $0.report.passed } ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("questbak-fuzz: \(error)\n".utf8))
    exit(1)
}
