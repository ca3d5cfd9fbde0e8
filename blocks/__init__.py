"""blocks"""
