# Sourced by Scripts/test and Scripts/bench: makes sure the toolchain and the Debian
# packages a job needs are present, installing the missing ones with apt-get.

# Swift lives in /opt/swift on our machines; put it on PATH when it is not there yet.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "pkgtool: swift 6 is required and was not found on PATH (nor in /opt/swift/usr/bin)" >&2
    exit 2
fi

# Libraries the build links (zlib, xxHash, libcurl, libcrypto) and the tools tests and
# benchmarks use or compare with. python3-venv holds SeaweedFS, the S3 server of the sync
# tests and benchmark (Scripts/seaweedfs); rclone and restic are the sync suite's peers.
BUILD_PACKAGES="pkg-config zlib1g-dev libxxhash-dev libcurl4-openssl-dev libssl-dev libxml2-dev"
# git: quoting compared with git's, and the consumer check's tagged clone; zsh, fish, man-db
# (with groff-base): the completion scripts and the manual page are run in them; util-linux
# (setpriv, findmnt), mount, xfsprogs and e2fsprogs (chattr): the tests run as nobody, on a
# loop-mounted XFS image and an immutable folder. In CI a test missing any of them fails
# (Tests/PackageTestSupport/Prerequisite.swift); elsewhere it is skipped, saying why.
TOOL_PACKAGES="xxhash zip unzip p7zip-full libarchive-tools rsync python3 python3-venv util-linux mount git zsh fish man-db groff-base xfsprogs e2fsprogs rclone restic"

ensure_packages() {
    local missing=()
    local package
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "Installing ${missing[*]} (apt-get)…" >&2
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
            echo "pkgtool: missing Debian packages: ${missing[*]}; install them as root" >&2
            exit 2
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
