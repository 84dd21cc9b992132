"""rldp.demo"""
