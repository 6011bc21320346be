"""State of the SQL service: a real SQLite database (serialised with SQLite's own `serialize`),
plus the business insights an agent records with `append_insight`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Insight(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    created_at: str


class SqlState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    insights: dict[str, Insight]


SCHEMA = """
CREATE TABLE customers (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, industry TEXT, city TEXT, tier TEXT);
CREATE TABLE contacts (id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id), name TEXT NOT NULL,
                       email TEXT NOT NULL UNIQUE, title TEXT);
CREATE TABLE products (id TEXT PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, category TEXT, price REAL NOT NULL CHECK (price >= 0));
CREATE TABLE employees (id TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, team TEXT, title TEXT,
                        manager_id TEXT REFERENCES employees(id), location TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL,
                     status TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'delivered', 'cancelled')), total REAL NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id TEXT NOT NULL REFERENCES products(id),
                          quantity INTEGER NOT NULL CHECK (quantity > 0), unit_price REAL NOT NULL, PRIMARY KEY (order_id, product_id));
CREATE TABLE invoices (id TEXT PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), amount REAL NOT NULL,
                       status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'void', 'overdue')), due_date TEXT NOT NULL);
"""
