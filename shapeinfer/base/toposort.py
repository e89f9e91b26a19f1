"""Topological order of a graph's nodes, given each node's producers by position."""

from __future__ import annotations

import heapq
from collections.abc import Sequence


def lexicographic_order(preds: Sequence[Sequence[int]]) -> list[int]:
    """Node positions with producers first, the lowest ready position first.

    ``preds[k]`` lists the positions of the nodes whose outputs node ``k`` reads (repeats and
    ``k`` itself are ignored). Where the given order is already valid it is kept, so a sorted
    graph comes back unchanged. Nodes on a cycle (or reading from one) are left out: the result
    is shorter than ``preds`` exactly when the graph has a cycle. O(n log n) with a heap.
    """
    indeg = [0] * len(preds)
    users: list[list[int]] = [[] for _ in preds]
    for k, ps in enumerate(preds):
        for p in set(ps):
            if p != k:
                indeg[k] += 1
                users[p].append(k)
    ready = [k for k, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, u)
    return order
