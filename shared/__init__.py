"""rldp.shared"""
