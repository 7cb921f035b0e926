"""``python -m recipe.cli`` = the ``recipe`` console script."""
from recipe.cli import main

if __name__ == "__main__":
    main()
