"""National teams: in a document about one sport's national teams, a country's name is its team.

Sports news names a team by its country: "Belgium scrape past Turkey", "SLOVAKIA BEAT FAROES". The reader links some
of these names to the team (*Turkey national football team*) and others, in the same report, to the country. A
document reports on one kind of national team where its links name national teams of exactly that kind
(" national football team", " national cricket team"), or where its text names a competition whose teams the KB
holds by country (*Fed Cup*, *Spain Fed Cup team*), and on no other kind. There, a link to an entity that has a
team of that kind in the KB, written as the entity's own title ("Belgium", "BELGIUM"), takes the team; a name read
as a place stays: after "in" ("the finals in France") or after a capitalised word and a comma (the dateline
"TOFTIR, Faroe Islands"). Found and given spans alike (docs/decisions.md#national-teams).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.places import reads_as_place
from annotator.pipeline.stages import Reading

# "Romania national under-21 football team", "New Zealand national rugby union team"
_TEAM = re.compile(r"(?P<country>.+?)(?P<kind> national (?:under-\d+ )?[a-z ]*team)")


@dataclass(frozen=True, eq=False)
class NationalTeams:
    """The stage as a post-processor; nothing is read again."""

    titles: Sequence[str]  # KB titles by row
    teams: dict[tuple[str, str], int]  # (country title, kind) → the team's row
    kinds: dict[int, str]  # a team's row → its kind
    competitions: dict[str, re.Pattern[str]]  # a competition's kind (" Fed Cup team") → its name in a text

    @classmethod
    def from_titles(cls, titles: Sequence[str]) -> NationalTeams:
        teams, kinds, competitions = {}, {}, {}
        known = set(titles)
        for row, title in enumerate(titles):
            team = _TEAM.fullmatch(title)
            if team is not None:
                teams[team["country"], team["kind"]] = row
                kinds[row] = team["kind"]
                continue
            team = _competition_team(title, known)
            if team is not None:
                country, competition = team
                kind = f" {competition} team"
                teams[country, kind] = row
                kinds[row] = kind
                competitions[kind] = re.compile(rf"\b{re.escape(competition)}\b", re.IGNORECASE)
        return cls(titles, teams, kinds, competitions)

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            linked = [span for span in document.links if span.is_linked(decoding.threshold)]
            document.relink(self.team_links(document.text, linked))

    def team_links(self, text: str, linked: Sequence[LinkedSpan]) -> list[LinkedSpan]:
        """The links to a country that the document's one kind of national team moves to that country's team."""
        kinds = {self.kinds[span.entity] for span in linked if span.entity in self.kinds}
        kinds |= {kind for kind, name in self.competitions.items() if name.search(text)}
        if len(kinds) != 1:
            return []
        kind, = kinds
        moved = []
        for span in linked:
            title = self.titles[span.entity]
            team = self.teams.get((title, kind))
            if (team is not None and text[span.start:span.end].casefold() == title.casefold()
                    and not reads_as_place(text, span.start)):
                moved.append(LinkedSpan(span.start, span.end, team, span.score))
        return moved


def _competition_team(title: str, titles: set[str]) -> tuple[str, str] | None:
    """(country, competition) where `title` is "<country> <competition> team", both KB titles and the competition a
    name of two capitalised words or more ("Czech Republic Fed Cup team"; not "Tennessee Volunteers Football
    team", whose "Football" a sports report writes anyway)."""
    if not title.endswith(" team"):
        return None
    words = title.removesuffix(" team").split(" ")
    for cut in range(1, len(words) - 1):
        country, competition = " ".join(words[:cut]), " ".join(words[cut:])
        if all(word[:1].isupper() for word in words[cut:]) and country in titles and competition in titles:
            return country, competition
    return None
