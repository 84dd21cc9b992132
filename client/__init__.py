"""rldp.client"""
