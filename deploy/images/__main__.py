import sys

from deploy.images.build import main

sys.exit(main())
