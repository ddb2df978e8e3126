"""The images the workflow's rules run in: containers/images.yaml plus config overrides.

images.yaml names each image (``sandbox``, ``gpu``, ``haskell``, ``verus``), its
definition file and the reference a cluster pulls it from (``oras://...``). A site
that builds the images itself points config ``containers.<name>`` at its own
reference or at a local ``.sif`` file; everything else keeps the published one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import UserError
from .deffile import LABEL_IMAGE, LABEL_VERSION, read_def

REGISTRY = Path("containers") / "images.yaml"
REF = re.compile(r"^(oras|docker|library|shub)://[^\s]+$")


@dataclass(frozen=True)
class Image:
    """One image: its short name, definition file (repo-relative), version and the
    reference rules use (published or overridden by config)."""

    name: str
    definition: str
    version: str
    ref: str
    published_ref: str

    @property
    def overridden(self) -> bool:
        return self.ref != self.published_ref


def _valid_ref(ref: object) -> bool:
    return isinstance(ref, str) and bool(REF.match(ref) or ref.endswith(".sif"))


def load_images(repo: str | Path, overrides: dict | None = None) -> dict[str, Image]:
    """Read the registry under ``repo`` and apply config ``containers`` overrides."""
    repo = Path(repo)
    path = repo / REGISTRY
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UserError(f"cannot read the image registry {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise UserError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("images"), dict):
        raise UserError(f"{path}: expected a mapping with an 'images' mapping")
    images = {}
    for name, entry in data["images"].items():
        if not isinstance(entry, dict) or not {"def", "version", "ref"} <= set(entry):
            raise UserError(f"{path}: image {name} needs def, version and ref")
        if not _valid_ref(entry["ref"]):
            raise UserError(f"{path}: image {name} has an invalid ref {entry['ref']!r}")
        images[name] = Image(name, str(entry["def"]), str(entry["version"]), entry["ref"], entry["ref"])
    for name, ref in (overrides or {}).items():
        if name not in images:
            raise UserError(f"config containers.{name}: no such image (known: {', '.join(sorted(images))})")
        if not _valid_ref(ref):
            raise UserError(
                f"config containers.{name}: {ref!r} is neither an oras://, docker:// "
                "reference nor a .sif file"
            )
        old = images[name]
        images[name] = Image(name, old.definition, old.version, str(ref), old.published_ref)
    return images


def registry_problems(repo: str | Path) -> list[str]:
    """Ways the registry and the definition files disagree ([] when they agree)."""
    repo = Path(repo)
    problems = []
    images = load_images(repo)
    for image in images.values():
        def_path = repo / image.definition
        if not def_path.is_file():
            problems.append(f"image {image.name}: definition {image.definition} does not exist")
            continue
        labels = read_def(def_path).labels
        if labels.get(LABEL_VERSION) != image.version:
            problems.append(
                f"image {image.name}: registry version {image.version} but the definition "
                f"says {labels.get(LABEL_VERSION)}"
            )
        tag = image.published_ref.rsplit(":", 1)[-1] if image.published_ref.count(":") >= 2 else None
        if tag != image.version:
            problems.append(
                f"image {image.name}: the published reference's tag {tag} is not the version {image.version}"
            )
        if labels.get(LABEL_IMAGE) and not image.published_ref.rstrip().split(":")[-2].endswith(
            labels[LABEL_IMAGE]
        ):
            problems.append(
                f"image {image.name}: reference {image.published_ref} does not name the image "
                f"{labels[LABEL_IMAGE]}"
            )
    defs = sorted(p.relative_to(repo).as_posix() for p in (repo / "containers").glob("*.def"))
    unregistered = set(defs) - {i.definition for i in images.values()}
    problems += [f"{d} is not in {REGISTRY}" for d in sorted(unregistered)]
    return problems
