// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "questbak",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "QuestBakKit", targets: ["QuestBakKit"]),
        .executable(name: "questbak", targets: ["questbak"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `make docs`: the DocC catalog built with warnings as errors.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libarchive: tar writing and reading with zstd and gzip filters.
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // zlib: raw DEFLATE for the store's compiled model cache (Z_MODELCACHE).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // zstd itself: archive frames with content checksums (libarchive's zstd filter sets none).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // SQLite's variadic configuration calls, wrapped for Swift (triggers off during a restore).
        .systemLibrary(name: "CSQLiteConfig", path: "Sources/CSQLiteConfig"),
        // The library: Values ← Model ← Store ← Archive ← Rules ← Pipelines. No flags, no
        // environment, no signal handlers: an app can embed it.
        .target(
            name: "QuestBakKit",
            dependencies: [
                "CArchive",
                "CZlib",
                "CZstd",
                "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for reading and binding TEXT with exact byte lengths (StoredValue).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                // scrypt, for age's passphrase recipient (Archive/Age).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The command line: subcommands, rendering, hints, exit statuses, process hooks.
        .target(
            name: "QuestBakCLI",
            dependencies: ["QuestBakKit", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "questbak", dependencies: ["QuestBakCLI"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // Test tooling: fixture and bulk-store generators, the fuzzer. Only tools and tests use it.
        .target(
            name: "QuestBakFixtures",
            dependencies: [
                "QuestBakKit", "CArchive", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(name: "questbak-fixtures", dependencies: ["QuestBakFixtures"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // The archive reader's fuzz campaign: `swift run -c release questbak-fuzz --iterations 10000`.
        .executableTarget(name: "questbak-fuzz", dependencies: ["QuestBakFixtures"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "QuestBakTestSupport",
            dependencies: [
                "QuestBakKit", "QuestBakFixtures", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The library as an app uses it: a plain import, public symbols only (no package access),
        // built and run by `make test`.
        .executableTarget(
            name: "questbak-example", dependencies: ["QuestBakKit"], path: "Examples/BackupApp", packageAccess: false,
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Tests of the public API, which see only what an app sees (no @testable, no package access).
        .testTarget(
            name: "QuestBakAPITests", dependencies: ["QuestBakKit"], packageAccess: false,
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "QuestBakKitTests",
            dependencies: [
                "QuestBakKit", "QuestBakFixtures", "QuestBakTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "questbakTests",
            dependencies: [
                "questbak", "QuestBakCLI", "QuestBakFixtures", "questbak-fixtures", "QuestBakTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
