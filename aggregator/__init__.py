"""rldp.aggregator"""
