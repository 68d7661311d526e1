"""The library does not depend on its file format or its evaluation: no module of annotator imports nif or gerbil,
except the two applications installed inside it, the web service (annotator.service: the NIF routes) and the command
line (annotator.cli: NIF input and output, training scored with GERBIL's measures), which use the library as any
caller would."""
from __future__ import annotations

import ast
from pathlib import Path

ANNOTATOR = Path(__file__).resolve().parents[2] / "annotator"
FORBIDDEN = ("nif", "gerbil")
APPLICATIONS = ("service", "cli")  # annotator.service, annotator.cli


def imported_packages(path: Path) -> set[str]:
    """The top-level packages a module imports anywhere (inside functions and `TYPE_CHECKING` blocks too)."""
    packages = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            packages.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            packages.add(node.module.split(".")[0])
    return packages


def test_the_library_imports_neither_nif_nor_gerbil() -> None:
    modules = sorted(path for path in ANNOTATOR.rglob("*.py")
                     if path.relative_to(ANNOTATOR).parts[0] not in APPLICATIONS)
    assert len(modules) > 30  # the scan found the package
    offending = {str(path.relative_to(ANNOTATOR.parent)): sorted(imported_packages(path) & set(FORBIDDEN))
                 for path in modules}
    assert {path: packages for path, packages in offending.items() if packages} == {}
