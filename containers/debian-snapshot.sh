#!/bin/sh
# Point apt at one dated snapshot of Debian bookworm (snapshot.debian.org) and update,
# so that every image build resolves the same package versions. Usage: SNAPSHOT_ID.
set -eu
snapshot="$1"
rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*
cat > /etc/apt/sources.list.d/snapshot.sources <<SOURCES
Types: deb
URIs: http://snapshot.debian.org/archive/debian/${snapshot}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://snapshot.debian.org/archive/debian-security/${snapshot}
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
# Snapshots are old by design: their Release files' Valid-Until has passed.
apt-get -o Acquire::Check-Valid-Until=false update
