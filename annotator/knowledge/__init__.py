"""What the KB knows, built offline as data (issue 75): the entity graph, prominence and name priors.

- `names`: the one folding of names (`name_key`);
- `tables`: `Knowledge` and `NamePriors`, saved and loaded as arrays with their identity;
- `build`: the offline build from a KB and a checkpoint's training links, cached by identity.

`python -m annotator.knowledge` (or `entqa knowledge`) builds them ahead of time.
"""
from annotator.knowledge.build import build_knowledge, cached_knowledge_dir, knowledge_identity
from annotator.knowledge.names import name_key
from annotator.knowledge.tables import Knowledge, NameCounts, NamePriors

__all__ = ["Knowledge", "NameCounts", "NamePriors", "build_knowledge", "cached_knowledge_dir", "knowledge_identity",
           "name_key"]
