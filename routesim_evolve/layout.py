"""Where the project's own folders are: the checkout this package sits in.

The Go module, the prompt packs and the champions ship beside the Python
package rather than inside it; every module that needs one asks here, so
that moving a folder means changing one line.
"""

from __future__ import annotations

from pathlib import Path

#: The checkout: the folder holding routesim_evolve/, go/, ldk/, prompts/, champions/.
PROJECT_ROOT = Path(__file__).resolve().parents[1]

GO_DIR = PROJECT_ROOT / "go"
LDK_DIR = PROJECT_ROOT / "ldk"
PROMPTS_DIR = PROJECT_ROOT / "prompts"
CHAMPIONS_DIR = PROJECT_ROOT / "champions"
