"""Apptainer definition files: parse them and check that they are pinned.

A definition file has a header (``Bootstrap: docker``, ``From: <image>``) and
sections (``%post``, ``%environment``, ``%labels``, ``%files``, ``%test``...).
``check_pinning`` lists every way a definition could build something different
tomorrow than today: a base image not named by digest, a ``latest`` tag, a
download without a sha256 check, an unpinned apt/pip/cabal/rustup install.
Images cannot be built on the machines that run the tests, so this check is what
keeps the definitions honest there.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

KNOWN_SECTIONS = {
    "post",
    "environment",
    "labels",
    "files",
    "test",
    "runscript",
    "help",
    "setup",
    "startscript",
    "arguments",
}
DIGEST = re.compile(
    r"^(?P<name>[a-z0-9][a-z0-9._/-]*)(:(?P<tag>[A-Za-z0-9._-]+))?@sha256:(?P<hex>[0-9a-f]{64})$"
)
SHA256_HEX = re.compile(r"\b[0-9a-f]{64}\b")
EXACT_PIP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!-]+$")
EXACT_APT = re.compile(r"^[a-z0-9][a-z0-9.+-]*(:[a-z0-9]+)?=[A-Za-z0-9.+:~-]+$")
EXACT_HACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*-[0-9]+(\.[0-9]+)*$")
EXACT_TOOLCHAIN = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[a-z0-9_-]+)?$")
LABEL_IMAGE = "org.selfplay.image"
LABEL_VERSION = "org.selfplay.version"


class DefFileError(UserError):
    """A definition file that cannot be read as one."""


@dataclass
class DefFile:
    """One parsed definition: header keys (lower-cased) and section bodies by name."""

    path: str
    header: dict[str, str]
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return self.header.get("from", "")

    @property
    def labels(self) -> dict[str, str]:
        out = {}
        for line in self.sections.get("labels", "").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, value = line.partition(" ")
                out[key] = value.strip()
        return out

    @property
    def environment(self) -> dict[str, str]:
        """Variables the %environment section exports (simple ``export K=V`` lines)."""
        out = {}
        for line in self.sections.get("environment", "").splitlines():
            m = re.match(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
            if m:
                value = m.group(2).strip()
                out[m.group(1)] = value[1:-1] if value[:1] == value[-1:] and value[:1] in "\"'" else value
        return out

    @property
    def files(self) -> list[tuple[str, str]]:
        """(source on the build host, destination in the image) for each %files line."""
        out = []
        for line in self.sections.get("files", "").splitlines():
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                out.append((parts[0], parts[1] if len(parts) > 1 else parts[0]))
        return out


def parse_def(text: str, path: str = "<def>") -> DefFile:
    """Split a definition file into its header and sections."""
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^%([A-Za-z]+)\b(.*)$", line)
        if m:
            current = m.group(1).lower()
            if current not in KNOWN_SECTIONS:
                raise DefFileError(f"{path}:{number}: unknown section %{m.group(1)}")
            if current in sections:
                raise DefFileError(f"{path}:{number}: section %{current} appears twice")
            sections[current] = []
            continue
        if current is None:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            key, sep, value = stripped.partition(":")
            if not sep or not key.strip() or " " in key.strip():
                raise DefFileError(f"{path}:{number}: header line is not 'Key: value': {stripped!r}")
            header[key.strip().lower()] = value.strip()
        else:
            sections[current].append(line)
    if "bootstrap" not in header:
        raise DefFileError(f"{path}: no 'Bootstrap:' header")
    if "from" not in header:
        raise DefFileError(f"{path}: no 'From:' header")
    return DefFile(path, header, {name: "\n".join(body) for name, body in sections.items()})


def read_def(path: str | Path) -> DefFile:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise DefFileError(f"cannot read container definition {path}: {exc.strerror}") from exc
    return parse_def(text, str(path))


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script: continuation lines joined, comments
    dropped, split at ;, &&, || and |. Here-document bodies are skipped."""
    commands: list[list[str]] = []
    lines = script.replace("\\\n", " ").splitlines()
    heredoc_end: str | None = None
    for line in lines:
        if heredoc_end is not None:
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        if m:
            heredoc_end = m.group(1)
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            tokens = line.split()
        current: list[str] = []
        for tok in tokens:
            if tok in (";", "&&", "||", "|", "&", ";;"):
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(tok)
        if current:
            commands.append(current)
    return commands


def _strip_env_prefix(cmd: list[str]) -> list[str]:
    """Drop leading VAR=value assignments and wrappers such as `env`."""
    i = 0
    while i < len(cmd) and (
        re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", cmd[i]) or cmd[i] in ("env", "sudo", "exec")
    ):
        i += 1
    return cmd[i:]


def _apt_problems(cmd: list[str]) -> list[str]:
    if len(cmd) < 2 or cmd[1] != "install":
        return []
    pkgs = [a for a in cmd[2:] if not a.startswith("-")]
    return [
        f"apt package not pinned to a version: {p} (write {p}=<version>)"
        for p in pkgs
        if not EXACT_APT.match(p)
    ]


def _pip_problems(cmd: list[str], requirement_files: dict[str, str | None]) -> list[str]:
    try:
        at = cmd.index("install")
    except ValueError:
        return []
    problems = []
    args = cmd[at + 1 :]
    skip_value = {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "--index-url",
        "-i",
        "--extra-index-url",
        "--target",
        "-t",
        "--prefix",
        "--root",
        "-f",
        "--find-links",
        "--cache-dir",
    }
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-r", "--requirement"):
            problems += _requirements_file_problems(
                args[i + 1] if i + 1 < len(args) else "", requirement_files
            )
            i += 2
            continue
        if arg in skip_value:
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        if not EXACT_PIP.match(arg):
            problems.append(f"pip requirement not pinned with ==: {arg}")
        i += 1
    return problems


def _requirements_file_problems(dest: str, requirement_files: dict[str, str | None]) -> list[str]:
    if dest not in requirement_files:
        return [f"pip -r {dest}: the file is not copied in by %files, so its pins cannot be checked"]
    text = requirement_files[dest]
    if text is None:
        return [f"pip -r {dest}: the %files source does not exist"]
    problems = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not EXACT_PIP.match(line):
            problems.append(f"{dest}: requirement not pinned with ==: {line}")
    return problems


def _cabal_problems(cmd: list[str]) -> list[str]:
    if len(cmd) < 2:
        return []
    if cmd[1] == "update":
        if not any("," in a for a in cmd[2:]) and not any(a.startswith("--index-state") for a in cmd[2:]):
            return [
                "cabal update without a pinned index state (cabal update hackage.haskell.org,<timestamp>)"
            ]
        return []
    if cmd[1] != "install":
        return []
    problems = []
    if not any(a.startswith("--index-state") for a in cmd[2:]):
        problems.append("cabal install without --index-state=<timestamp>")
    for a in cmd[2:]:
        if not a.startswith("-") and not EXACT_HACKAGE.match(a):
            problems.append(f"cabal package without an exact version: {a} (write {a}-<version>)")
    return problems


def _toolchain_problems(cmd: list[str]) -> list[str]:
    for i, a in enumerate(cmd):
        value = None
        if a == "--default-toolchain" and i + 1 < len(cmd):
            value = cmd[i + 1]
        elif a.startswith("--default-toolchain="):
            value = a.split("=", 1)[1]
        if value is not None and value != "none" and not EXACT_TOOLCHAIN.match(value):
            return [f"rust toolchain not an exact version: {value}"]
    if len(cmd) >= 3 and cmd[0] == "rustup" and cmd[1:3] == ["toolchain", "install"]:
        return [
            f"rust toolchain not an exact version: {t}"
            for t in cmd[3:]
            if not t.startswith("-") and not EXACT_TOOLCHAIN.match(t)
        ]
    return []


def _download_target(cmd: list[str]) -> tuple[str, str] | None:
    """(url, file written) of a curl/wget download, or None if `cmd` is not one."""
    name = cmd[0].rsplit("/", 1)[-1] if cmd else ""
    if name not in ("curl", "wget"):
        return None
    urls = [a for a in cmd[1:] if re.match(r"^(https?|ftp)://", a)]
    if not urls:
        return None
    out = None
    flags = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
    for i, a in enumerate(cmd):
        if a in flags and i + 1 < len(cmd):
            out = cmd[i + 1]
        elif a.startswith("--output=") or a.startswith("--output-document="):
            out = a.split("=", 1)[1]
    if out is None:
        out = urls[0].rstrip("/").rsplit("/", 1)[-1]
    return urls[0], out


def check_pinning(d: DefFile, repo: str | Path | None = None) -> list[str]:
    """Every reason ``d`` is not fully pinned ([] when it is)."""
    problems: list[str] = []
    base = d.base
    m = DIGEST.match(base)
    if d.header.get("bootstrap", "").lower() not in ("docker", "oras", "library", "localimage"):
        problems.append(f"unsupported Bootstrap: {d.header.get('bootstrap')}")
    if d.header.get("bootstrap", "").lower() != "localimage" and not m:
        problems.append(f"base image not pinned by digest: From: {base} (write name:tag@sha256:<digest>)")
    if m and m.group("tag") == "latest":
        problems.append("base image uses the tag 'latest'")

    labels = d.labels
    for key in (LABEL_IMAGE, LABEL_VERSION):
        if not labels.get(key):
            problems.append(f"%labels has no {key}")
    env = d.environment
    if env.get("SELFPLAY_IMAGE") != labels.get(LABEL_IMAGE):
        problems.append("%environment SELFPLAY_IMAGE differs from the image label")
    if env.get("SELFPLAY_IMAGE_VERSION") != labels.get(LABEL_VERSION):
        problems.append("%environment SELFPLAY_IMAGE_VERSION differs from the version label")

    requirement_files: dict[str, str | None] = {}
    for src, dest in d.files:
        source = Path(repo, src) if repo is not None else Path(src)
        requirement_files[dest] = source.read_text() if source.is_file() else None

    post = d.sections.get("post", "")
    if not post.strip():
        problems.append("no %post section")
    for section in ("post", "test", "environment"):
        body = "\n".join(ln.split("#", 1)[0] for ln in d.sections.get(section, "").splitlines())
        if re.search(r"(?<![A-Za-z0-9_-])latest(?![A-Za-z0-9_-])", body):
            problems.append(f"%{section} mentions 'latest'")

    commands = [_strip_env_prefix(c) for c in shell_commands(post)]
    post_text = post.replace("\\\n", " ")
    for cmd in commands:
        if not cmd:
            continue
        tool = cmd[0].rsplit("/", 1)[-1]
        if tool in ("apt-get", "apt"):
            problems += _apt_problems(cmd)
        elif tool in ("pip", "pip3") or (tool.startswith("python") and cmd[1:3] == ["-m", "pip"]):
            problems += _pip_problems(cmd if tool in ("pip", "pip3") else cmd[2:], requirement_files)
        elif tool == "cabal":
            problems += _cabal_problems(cmd)
        elif tool in ("rustup", "rustup-init") or tool.endswith("rustup-init"):
            problems += _toolchain_problems(cmd)
        download = _download_target(cmd)
        if download:
            url, out = download
            if not _checksum_verified(out, post_text):
                problems.append(f"download not verified by sha256: {url} -> {out}")
    return problems


def _checksum_verified(out: str, post_text: str) -> bool:
    """True when `out` is checked by `sha256sum -c` against a literal 64-hex digest."""
    base = out.rsplit("/", 1)[-1]
    for line in post_text.splitlines():
        if "sha256sum" in line and ("-c" in line or "--check" in line) and SHA256_HEX.search(line):
            if out in line or re.search(rf"(?<![\w.-]){re.escape(base)}(?![\w.-])", line):
                return True
    return False
