import Foundation
import QuestBakKit

// questbak-fuzz: mutation fuzzing of the archive reader (ArchiveFuzzer), for long campaigns.
//
//   swift run -c release questbak-fuzz [--iterations N] [--seed S] [--time-limit SECONDS] [--work DIR] [--verbose] [SEED.qbak …]
//
// N mutants per seed archive (default 2500); seeds default to Tests/Corpus/archive/*.qbak.
// Exits 0 when every input ended in time with a typed error or was accepted, 1 otherwise. A
// crash or hang leaves the input that caused it at DIR/input.qbak. --verbose also lists some
// accepted mutants, to see which damage passes unnoticed.

var iterations = 2500
var seed: UInt64 = 1
var timeLimit = 2.0
var work: URL?
var verbose = false
var seeds: [URL] = []
var arguments = CommandLine.arguments.dropFirst()
func value(_ name: String) -> String {
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
    case "-h", "--help":
        print("usage: questbak-fuzz [--iterations N] [--seed S] [--time-limit SECONDS] [--work DIR] [--verbose] [SEED.qbak …]")
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
let directory = work ?? FileManager.default.temporaryDirectory.appendingPathComponent("questbak-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
do {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    print("work directory: \(directory.path)")
    var total = ArchiveFuzzer.Report()
    for (index, archive) in seeds.enumerated() {
        let report = try ArchiveFuzzer.run(
            seedArchive: archive, iterations: iterations, seed: seed &+ UInt64(index), workDirectory: directory, timeLimit: timeLimit)
        print("\(archive.lastPathComponent): \(report.inputs) inputs, slowest \(String(format: "%.3f", report.slowestSeconds)) s\(report.passed ? "" : ", FAILED")")
        total.merge(report)
    }
    print(total)
    if verbose {
        for sample in total.acceptedSamples { print("accepted: \(sample)") }
    }
    exit(total.passed ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("questbak-fuzz: \(error)\n".utf8))
    exit(1)
}
