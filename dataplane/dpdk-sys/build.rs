//! Build script for `dpdk-sys`: finds the system DPDK with pkg-config, generates bindings
//! for an allowlisted subset of its API with bindgen, and compiles `src/shim.c`, which turns
//! DPDK's `static inline` fast-path functions into real symbols Rust can call.
//!
//! Both bindgen and cc get the *full* `pkg-config --cflags libdpdk` (it carries
//! `-include rte_config.h` and `-march=...`, which change struct layouts and inline code).

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    println!("cargo:rerun-if-changed=src/shim.h");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let dpdk = match pkg_config::Config::new().atleast_version("22.11").cargo_metadata(true).probe("libdpdk") {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!(
                "\n\nerror: DPDK (pkg-config module `libdpdk`, version >= 22.11) was not found.\n\
                 Run `scripts/setup` to install Debian's libdpdk-dev (and libclang-dev for bindgen),\n\
                 or set PKG_CONFIG_PATH to the directory holding libdpdk.pc.\n\
                 pkg-config said: {e}\n"
            );
            std::process::exit(1);
        }
    };

    let cflags = pkg_config_output(&["--cflags", "libdpdk"]);
    let cflags: Vec<String> = shell_split(&cflags);
    let libdir = pkg_config_output(&["--variable=libdir", "libdpdk"]);
    let libdir = PathBuf::from(libdir.trim());

    // rte_eth_from_rings() lives in the net_ring PMD, which pkg-config --libs does not list.
    // Linking it is harmless: the EAL's plugin loader dlopen()s the same file (same inode),
    // and the dynamic loader keeps a single copy.
    println!("cargo:rustc-link-lib=dylib=rte_net_ring");

    let pmd_dir = find_pmd_dir(&libdir);
    println!("cargo:rustc-env=DPDK_SYS_PMD_DIR={}", pmd_dir.display());
    println!("cargo:rustc-env=DPDK_SYS_VERSION={}", dpdk.version);
    println!("cargo:pmd_dir={}", pmd_dir.display());

    compile_shim(&cflags);
    generate_bindings(&cflags);
}

fn pkg_config_output(args: &[&str]) -> String {
    let out = std::process::Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running pkg-config {args:?}: {e}"));
    if !out.status.success() {
        panic!("pkg-config {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8(out.stdout).expect("pkg-config output is UTF-8")
}

/// pkg-config quotes nothing in libdpdk.pc, but be tolerant of backslash-escaped spaces.
fn shell_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The directory the EAL loads PMD plugins from: `<libdir>/dpdk/pmds-<ABI>`. The ABI is the
/// soname major of librte_eal (22.11 → 23 → `pmds-23.0`); if that guess is absent, take the
/// only `pmds-*` directory there is.
fn find_pmd_dir(libdir: &Path) -> PathBuf {
    let base = libdir.join("dpdk");
    let abi_major = std::fs::read_link(libdir.join("librte_eal.so")).ok().and_then(|t| {
        let name = t.file_name()?.to_string_lossy().into_owned();
        let major = name.strip_prefix("librte_eal.so.")?.split('.').next()?.to_owned();
        Some(major)
    });
    if let Some(major) = &abi_major {
        let guess = base.join(format!("pmds-{major}.0"));
        if guess.is_dir() {
            return guess;
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("pmds-")))
        .collect();
    found.sort();
    match found.pop() {
        Some(p) => p,
        None => {
            println!(
                "cargo:warning=no DPDK PMD plugin directory under {}; vdevs will not load unless EAL is given -d",
                base.display()
            );
            base
        }
    }
}

fn compile_shim(cflags: &[String]) {
    let mut build = cc::Build::new();
    build.file("src/shim.c").include("src").opt_level(3);
    for f in cflags {
        build.flag(f);
    }
    // DPDK headers trip a few warnings we do not own.
    build.flag_if_supported("-Wno-deprecated-declarations");
    build.compile("rocescope_dpdk_shim");
}

fn generate_bindings(cflags: &[String]) {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    let bindings = bindgen::Builder::default()
        .header("src/shim.h")
        .clang_args(cflags)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        // Functions: the control path we use, plus the shim's wrappers of inline functions.
        .allowlist_function("rte_eal_.*")
        .allowlist_function("rte_eth_.*")
        .allowlist_function("rte_pktmbuf_.*")
        .allowlist_function("rte_mempool_.*")
        .allowlist_function("rte_ring_.*")
        .allowlist_function("rte_lcore_.*")
        .allowlist_function("rte_get_.*lcore.*")
        .allowlist_function("rte_get_tsc_hz")
        .allowlist_function("rte_thread_(un)?register")
        .allowlist_function("rte_socket_.*")
        .allowlist_function("rte_strerror")
        .allowlist_function("rte_dev_(probe|remove)")
        .allowlist_function("shim_.*")
        // Types and constants.
        .allowlist_type("rte_mbuf")
        .allowlist_type("rte_eth_(conf|dev_info|stats|rss_conf|rxconf|txconf|link|rxmode|txmode)")
        .allowlist_type("rte_ether_addr")
        .allowlist_type("shim_.*")
        .allowlist_var("RTE_ETH_.*")
        .allowlist_var("RTE_MBUF_.*")
        .allowlist_var("RTE_PKTMBUF_HEADROOM")
        .allowlist_var("RTE_MAX_(LCORE|ETHPORTS|NUMA_NODES)")
        .allowlist_var("RTE_ETHDEV_QUEUE_STAT_CNTRS")
        .allowlist_var("RTE_ETH_NAME_MAX_LEN|RTE_DEV_NAME_MAX_LEN")
        .allowlist_var("RTE_MEMPOOL_.*")
        .allowlist_var("RTE_RING_NAMESIZE|RING_F_.*")
        .allowlist_var("LCORE_ID_ANY|SOCKET_ID_ANY")
        .allowlist_var("SHIM_.*")
        // Function-like macros (RTE_BIT64) hide many constants from cexpr; let clang evaluate them.
        .clang_macro_fallback()
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(true)
        .impl_debug(false)
        .layout_tests(true)
        .generate_comments(true)
        .generate()
        .expect("bindgen failed on src/shim.h (is libclang-dev installed?)");
    bindings.write_to_file(&out).expect("writing bindings.rs");
}
