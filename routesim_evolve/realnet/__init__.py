"""Sim to real: real lnd and btcd on a regtest network, to measure how far the
simulator's predictions are from real nodes (issue 43; docs/realnet.md)."""
