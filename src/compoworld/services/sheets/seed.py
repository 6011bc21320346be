"""Deterministic spreadsheets: a sales pipeline, a budget with formulas, a team roster."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext


def seed_sheets(svc, ctx: SeedContext) -> None:
    company, rng, now = ctx.company, ctx.rng, ctx.clock.now()
    ts = format_time(now - timedelta(days=3))
    pipeline = {
        "A1": "Customer",
        "B1": "Product",
        "C1": "Seats",
        "D1": "Unit price",
        "E1": "Value",
        "F1": "Stage",
        "G1": "Owner",
    }
    for r, cust in enumerate(company.customers[: ctx.scale(6, 25, 100)], start=2):
        prod = rng.choice(company.products)
        owner = rng.choice([p for p in company.employees if p.team == "Sales"] or list(company.employees))
        pipeline.update(
            {
                f"A{r}": cust.name,
                f"B{r}": prod.name,
                f"C{r}": rng.randrange(5, 120),
                f"D{r}": prod.price,
                f"E{r}": f"=C{r}*D{r}",
                f"F{r}": rng.choice(("Lead", "Proposal", "Negotiation", "Won", "Lost")),
                f"G{r}": owner.email,
            }
        )
    last = ctx.scale(6, 25, 100) + 1
    pipeline.update({f"D{last + 1}": "Total", f"E{last + 1}": f"=SUM(E2:E{last})"})
    svc.books.create(
        {
            "title": "Sales pipeline 2026",
            "sheets": [{"sheetId": 0, "title": "Pipeline", "cells": pipeline}],
            "modified": ts,
        }
    )
    budget = {"A1": "Team", "B1": "Q1", "C1": "Q2", "D1": "Q3", "E1": "Q4", "F1": "Total"}
    for r, team in enumerate(company.teams, start=2):
        budget.update(
            {
                f"A{r}": team.name,
                **{f"{c}{r}": rng.randrange(20, 200) * 1000 for c in "BCDE"},
                f"F{r}": f"=SUM(B{r}:E{r})",
            }
        )
    n = len(company.teams) + 1
    budget.update({f"A{n + 1}": "All teams", f"F{n + 1}": f"=SUM(F2:F{n})"})
    roster = {"A1": "Name", "B1": "Email", "C1": "Team", "D1": "Title", "E1": "Location"}
    for r, p in enumerate(company.employees, start=2):
        roster.update(
            {f"A{r}": p.name, f"B{r}": p.email, f"C{r}": p.team, f"D{r}": p.title, f"E{r}": p.location}
        )
    svc.books.create(
        {
            "title": "Budget FY26",
            "sheets": [
                {"sheetId": 0, "title": "Budget", "cells": budget},
                {"sheetId": 1, "title": "Notes", "cells": {"A1": "Approved by finance"}},
            ],
            "modified": ts,
        }
    )
    svc.books.create(
        {
            "title": "Team roster",
            "sheets": [{"sheetId": 0, "title": "Sheet1", "cells": roster}],
            "modified": ts,
        }
    )
