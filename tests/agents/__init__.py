"""Tests of the agents: LLM roles over the real SDKs and a scripted server, the command agent."""
